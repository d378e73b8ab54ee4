"""A screenshot of Model Explorer showing parity's node data on a model
(docs/model-explorer.md): starts Model Explorer's server on 127.0.0.1 with
MODEL and one node-data file, opens it in headless Chromium driven over the
DevTools protocol on a pipe (no network, no extra package), expands every
layer, selects the node data and saves a PNG.

    python scripts/model_explorer_screenshot.py MODEL NODE_DATA.json OUT.png

Needs ai-edge-model-explorer and model-explorer-onnx (python/requirements.txt)
and Chromium (/usr/bin/chromium)."""

import argparse
import base64
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model, node_data, port):
    cmd = [sys.executable, "-m", "model_explorer", model, "--extensions=model_explorer_onnx",
           f"--node_data_paths={node_data}", "--host", "127.0.0.1", "--port", str(port),
           "--no_open_in_browser", "--skip_health_check"]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for _ in range(120):  # at most a minute
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
            return server
        except OSError:
            if server.poll() is not None:
                raise RuntimeError("model explorer exited: " + server.stdout.read())
            time.sleep(0.5)
    server.kill()
    raise RuntimeError("model explorer did not answer on port %d" % port)


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe (fds 3 and 4)."""

    def __init__(self, width, height):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)
            # dup2 onto the same number keeps close-on-exec (a pipe made
            # first, fds 3 and 4 free, is already there): Chromium then got
            # no pipe and the first call failed with EPIPE.
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--remote-debugging-pipe", "--use-angle=swiftshader",
             "--enable-unsafe-swiftshader", "--no-first-run", f"--window-size={width},{height}", "about:blank"],
            preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer, self.next_id, self.session = b"", 0, None

    def call(self, method, timeout=60, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while time.time() < deadline:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self.next_id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            self.buffer += os.read(self.from_chrome, 1 << 20)
        raise TimeoutError(method)

    def attach(self):
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def close(self):
        self.proc.kill()
        self.proc.wait()


def wait_for(tools, expression, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if tools.evaluate(expression):
            return True
        time.sleep(0.5)
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("node_data")
    parser.add_argument("out")
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--height", type=int, default=1000)
    args = parser.parse_args()
    from model_explorer.config import ModelExplorerConfig
    config = ModelExplorerConfig()
    config.add_model_from_path(args.model)
    config.add_node_data_from_path(args.node_data)
    port = free_port()
    server = start_server(args.model, args.node_data, port)
    tools = DevTools(args.width, args.height)
    try:
        tools.attach()
        tools.call("Page.enable")
        tools.call("Page.navigate", url=f"http://127.0.0.1:{port}/?data={config.to_url_param_value()}")
        if not wait_for(tools, "document.querySelectorAll('canvas').length > 0", 90):
            raise RuntimeError("Model Explorer drew no canvas: " + str(tools.evaluate("document.body.innerText")))
        time.sleep(5)  # the graph's layout runs in a worker
        # Expand every layer, then fit the graph to the pane (the toolbar's icons).
        clicked = tools.evaluate("""(() => {
            const expand = document.querySelector('mat-icon.expand-all');
            if (!expand) return false;
            expand.click();
            return true;
        })()""")
        if not clicked:
            raise RuntimeError("no 'expand all layers' icon in Model Explorer's toolbar")
        time.sleep(4)
        tools.evaluate("""[...document.querySelectorAll('mat-icon.toolbar-icon')]
            .find(e => e.textContent.trim() == 'fit_screen')?.click()""")
        # No tooltip left over from the clicks: focus away, pointer on empty space.
        tools.evaluate("document.activeElement && document.activeElement.blur()")
        tools.call("Input.dispatchMouseEvent", type="mouseMoved", x=20, y=300)
        # The toolbar's tooltips, opened by the clicks, live in Angular's overlay container.
        tools.evaluate("document.querySelectorAll('.cdk-overlay-container').forEach(e => e.style.display = 'none')")
        time.sleep(3)
        shot = tools.call("Page.captureScreenshot", format="png")
        with open(args.out, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        print(f"wrote {args.out}")
    finally:
        tools.close()
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
