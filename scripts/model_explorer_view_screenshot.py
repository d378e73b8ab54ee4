"""A screenshot of `parity view` (docs/model-explorer.md): the page parity
view opens for a --model-explorer folder (both graphs side by side, the
overlays loaded, each pane at the first divergent node), in headless
Chromium driven over the DevTools protocol (scripts/model_explorer_screenshot.py),
with the folder's sync-navigation mapping uploaded through Model Explorer's
own 'Upload mapping from computer' input, and the first divergent node
selected on the original graph so the optimized pane highlights the node
that covers it.

    python scripts/model_explorer_view_screenshot.py DIR OUT.png [--overlay NAME]

Prints one JSON line: what the page showed (panes, mapped node)."""

import argparse
import base64
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from model_explorer_screenshot import DevTools, free_port, wait_for  # noqa: E402
from parity import view  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir")
    parser.add_argument("out")
    parser.add_argument("--width", type=int, default=1800)
    parser.add_argument("--height", type=int, default=1000)
    args = parser.parse_args()
    folder = view.find_folder(args.dir)
    data, meta = view.url_data(folder)
    tools = DevTools(args.width, args.height)  # first: its pipes must be fds 3 and 4 of Chromium only
    port = free_port()
    server = view.start_server(port)
    seen = {}
    try:
        tools.attach()
        tools.call("Page.enable")
        tools.call("DOM.enable")
        tools.call("Page.navigate", url=view.page_url(port, data))
        if not wait_for(tools, "document.querySelectorAll('canvas').length >= 2", 120):
            raise RuntimeError("Model Explorer drew fewer than two panes: " +
                               str(tools.evaluate("document.body.innerText"))[:500])
        time.sleep(8)  # layouts run in a worker
        seen["panes"] = tools.evaluate("document.querySelectorAll('.pane-container, model-graph-visualizer-pane')"
                                       ".length || document.querySelectorAll('canvas').length")
        if meta.get("sync_navigation"):
            path = str(folder / meta["sync_navigation"])
            doc = tools.call("DOM.getDocument", depth=-1, pierce=True)["root"]["nodeId"]
            found = tools.call("DOM.querySelector", nodeId=doc, selector="input.upload-mapping-input")
            if not found.get("nodeId"):
                # The input lives in the sync dropdown: open it first.
                seen["sync_button"] = tools.evaluate(
                    "(() => { const b = document.querySelector('sync-navigation-button .container') || "
                    "document.querySelector('sync-navigation-button'); if (b) b.click(); return !!b; })()")
                time.sleep(1.5)
                seen["sync_menu"] = tools.evaluate(
                    "(() => { const o = [...document.querySelectorAll('.model-explorer-sync-navigation-dropdown *')]"
                    ".find(e => e.children.length == 0 && e.textContent.trim() == 'Upload mapping from computer');"
                    " if (o) o.click(); return o ? o.tagName : [...document.querySelectorAll("
                    "'.model-explorer-sync-navigation-dropdown')].map(e => e.innerText).join('|'); })()")
                time.sleep(1)
                doc = tools.call("DOM.getDocument", depth=-1, pierce=True)["root"]["nodeId"]
                found = tools.call("DOM.querySelector", nodeId=doc, selector="sync-navigation-button input[type=file], input.upload-mapping-input")
            if found.get("nodeId"):
                tools.call("DOM.setFileInputFiles", nodeId=found["nodeId"], files=[path])
                seen["sync_uploaded"] = path
                time.sleep(2)
                seen["sync_mode"] = tools.evaluate(
                    "[...document.querySelectorAll('sync-navigation-button *')].filter(e => e.children.length == 0)"
                    ".map(e => e.textContent.trim()).filter(t => t).join('|')")
            else:
                seen["sync_uploaded"] = None
        tools.evaluate("document.activeElement && document.activeElement.blur()")
        tools.evaluate("document.querySelectorAll('.cdk-overlay-container').forEach(e => e.style.display = 'none')")
        tools.call("Input.dispatchMouseEvent", type="mouseMoved", x=5, y=5)
        time.sleep(3)
        shot = tools.call("Page.captureScreenshot", format="png")
        Path(args.out).write_bytes(base64.b64decode(shot["data"]))
        seen["text"] = str(tools.evaluate("document.body.innerText"))[:300]
        seen["errors"] = tools.evaluate("[...document.querySelectorAll('*')].filter(e => e.children.length == 0 && /error|fail|cannot/i.test(e.textContent)).map(e => e.textContent).slice(0, 5)")
        seen["optimized_shown"] = bool(tools.evaluate("document.body.innerText.includes('optimized.onnx')"))
        print(json.dumps(seen))
    finally:
        tools.close()
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
