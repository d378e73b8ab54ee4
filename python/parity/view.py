"""`parity view DIR` (issue 53 item 3, docs/model-explorer.md "parity view"):
Model Explorer on 127.0.0.1 with the original graph and ORT's optimized graph
side by side, parity's overlays loaded on each, opened at the first divergent
node. DIR is a `--model-explorer` folder or a `--report` folder whose
report.html links one. The sync-navigation mapping between the two panes is
the folder's sync_navigation.json (Model Explorer 0.1's URL carries only the
sync mode, so the page is told to load it: the printed line says how).

    python -m parity.view DIR [--port N] [--no-browser] [--print-url]

Exit 2 with one line when DIR is not such a folder or Model Explorer
(ai-edge-model-explorer, model-explorer-onnx) is not installed."""

import argparse
import html
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

MARKER = ".parity-output"
KIND = "parity.model_explorer"


class ViewError(Exception):
    """A user's mistake: one line, exit 2."""


def find_folder(path):
    """The --model-explorer folder DIR is, or the one its report.html links."""
    d = Path(path)
    if not d.is_dir():
        raise ViewError(f"'{path}' is not a folder")
    if (d / "view.json").is_file():
        return d
    report = d / "report.html"
    if report.is_file():
        text = report.read_text(errors="replace")
        m = re.search(r'href="([^"]*)/view\.json"', text) or re.search(r'href="([^"]*)/README\.md"', text)
        if m:
            linked = (d / urllib.parse.unquote(html.unescape(m.group(1)))).resolve()
            if (linked / "view.json").is_file():
                return linked
    raise ViewError(f"'{path}' holds no parity Model Explorer overlays (view.json): give the folder of "
                    "--model-explorer DIR, or a --report folder written with --model-explorer")


def load_structure(model):
    """The model without its weights; ViewError when onnx is missing."""
    try:
        import onnx
        return onnx.load(str(model), load_external_data=False)
    except (ImportError, AttributeError) as e:
        raise ViewError(f"the onnx package is not usable in {sys.executable} ({e}): pip install onnx") from e


def graph_id(model):
    """The id Model Explorer's ONNX adapter gives the model's main graph."""
    name = load_structure(model).graph.name
    return name or "main_graph"


def renamed_copy(optimized, taken):
    """ORT names its optimized graph as the model's ("main_graph" for both),
    and Model Explorer's split pane finds a graph by id: a copy of the
    structure-only optimized.onnx under a temporary folder, its graph named
    "ort_optimized" when the name is taken (the folder is left as written)."""
    import tempfile
    m = load_structure(optimized)
    if m.graph.name != taken:
        return optimized
    m.graph.name = "ort_optimized"
    out = Path(tempfile.mkdtemp(prefix="parity_view_")) / optimized.name
    out.write_bytes(m.SerializeToString())
    return out


def url_data(folder):
    """The `data` parameter of Model Explorer's URL: both models, their
    overlays, two panes side by side, each at the first divergent node."""
    view = json.loads((folder / "view.json").read_text())
    model = view["model"]
    if not model or not Path(model).is_file():
        raise ViewError(f"the model '{model}' named in {folder / 'view.json'} is not a file")
    models = [{"url": model}]
    node_data = [str(folder / f) for f in view["original_node_data"]]
    targets = [Path(model).name] * len(node_data)
    first = view.get("first_divergence") or {}
    panes = [{"deepestExpandedGroupNodeIds": [], "selectedNodeId": first.get("original", ""),
              "selectedGraphId": graph_id(model), "selectedCollectionLabel": "",
              "widthFraction": 1.0}]
    if view.get("optimized"):
        optimized = renamed_copy(folder / view["optimized"], graph_id(model))
        models.append({"url": str(optimized)})
        node_data += [str(folder / f) for f in view["optimized_node_data"]]
        targets += [optimized.name] * len(view["optimized_node_data"])
        panes[0]["widthFraction"] = 0.5
        panes.append({"deepestExpandedGroupNodeIds": [], "selectedNodeId": first.get("optimized", ""),
                      "selectedGraphId": graph_id(optimized), "selectedCollectionLabel": "",
                      "widthFraction": 0.5})
    data = {"models": models, "nodeData": node_data, "nodeDataTargets": targets,
            "uiState": {"paneStates": panes}}
    return data, view


def check_installed():
    import importlib.util
    missing = [m for m in ("model_explorer", "model_explorer_onnx") if importlib.util.find_spec(m) is None]
    if missing:
        raise ViewError("Model Explorer is not installed in " + sys.executable + " (missing " + ", ".join(missing) +
                        "): pip install ai-edge-model-explorer model-explorer-onnx")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port):
    """Model Explorer's server on 127.0.0.1:port, answering; its process."""
    cmd = [sys.executable, "-m", "model_explorer", "--extensions=model_explorer_onnx", "--host", "127.0.0.1",
           "--port", str(port), "--no_open_in_browser", "--skip_health_check"]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
            return server
        except OSError:
            if server.poll() is not None:
                raise RuntimeError("Model Explorer's server exited: " + server.stderr.read().strip())
            time.sleep(0.25)
    server.kill()
    raise RuntimeError(f"Model Explorer's server did not answer on 127.0.0.1:{port}")


def page_url(port, data):
    return f"http://127.0.0.1:{port}/?data=" + urllib.parse.quote(json.dumps(data))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="parity view", description=__doc__.split("\n\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--port", type=int, default=0, help="the server's port (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="print the address, open no browser")
    parser.add_argument("--print-url", action="store_true", help="print the page's address and exit")
    args = parser.parse_args(argv)
    try:
        folder = find_folder(args.dir)
        data, view = url_data(folder)
        if args.print_url:
            print(page_url(args.port or 8080, data))
            return 0
        check_installed()
    except ViewError as e:
        print(f"parity: error: view: {e}", file=sys.stderr)
        return 2
    port = args.port or free_port()
    server = start_server(port)
    url = page_url(port, data)
    print(f"Model Explorer: http://127.0.0.1:{port}/ (the original graph left, ORT's optimized graph right)")
    print(f"open: {url}")
    if view.get("sync_navigation"):
        print("sync navigation: the toolbar's 'Sync navigation' > 'Upload mapping from computer' > "
              f"{folder / view['sync_navigation']}")
    if not args.no_browser:
        import webbrowser
        webbrowser.open(url)
    try:
        server.wait()
    except KeyboardInterrupt:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
