"""Report objects over the JSON the CLI writes (parity.check/1, parity.locate/1)."""
import json
import os
import shutil
from typing import Any, Dict, List, Optional


class Report:
    """A ``parity check`` or ``parity locate`` report: plain data with helpers.

    ``passed`` -- the verdict (check: overall_status PASS; locate: no divergence);
    ``verdict`` -- "PASS", "FAIL" or "NOT JUDGED" (a check or dataset whose
    coverage cannot support a PASS: ``data["coverage"]["missing"]`` says why);
    ``failed_tests`` -- ``[{"id", "reason", ...}]`` (check);
    ``first_divergence`` -- the first tensor where the target departs (tensor,
    producer, fused node, covered nodes and, against a torch dump, module; a
    check against a torch dump: its alignment's first divergent layer), or
    None; ``summary`` -- the CLI's console summary; ``data`` -- the whole JSON
    (same fields as ``--json FILE``); ``to_json()``; ``save_html(path)``.
    """

    def __init__(self, data: Dict[str, Any], summary: str = "", html: Optional[str] = None,
                 report_dir: Optional[str] = None):
        self.data = data
        self.summary = summary
        self._html = html
        self.report_dir = report_dir

    @property
    def kind(self) -> str:
        return str(self.data.get("schema", "")).split("/")[0].replace("parity.", "")

    @property
    def passed(self) -> bool:
        if "verdict" in self.data:  # parity.dataset/1
            return self.data["verdict"] == "PASS"
        if "overall_status" in self.data:
            return self.data["overall_status"] == "PASS"
        return self.first_divergence is None and all(
            t.get("status") != "fail" for t in self.data.get("tensors", []))

    @property
    def verdict(self) -> str:
        if "verdict" in self.data:
            return str(self.data["verdict"])
        if "overall_status" in self.data:
            return str(self.data["overall_status"])
        return "PASS" if self.passed else "FAIL"

    @property
    def failed_tests(self) -> List[Dict[str, Any]]:
        return list(self.data.get("failed_tests", []))

    @property
    def first_divergence(self) -> Optional[Dict[str, Any]]:
        d = self.data.get("first_divergence")
        if d is None and isinstance(self.data.get("locate"), dict):
            d = self.data["locate"].get("first_divergence")
        if d is None and isinstance(self.data.get("alignment"), dict):
            # check --torch: the first PyTorch layer the export departs from
            d = self.data["alignment"].get("first_divergence")
        return d or None

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The report as the CLI's ``--json`` writes it."""
        return json.dumps(self.data, indent=indent)

    def save_html(self, path: str) -> str:
        """Writes the self-contained report.html (check reports) to ``path``."""
        if self._html is None:
            raise ValueError(f"a {self.kind} report has no HTML form; parity.check() writes one")
        shutil.copyfile(self._html, path)
        return os.path.abspath(path)

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        fd = self.first_divergence
        where = f", first divergence at {fd.get('tensor')!r}" if fd else ""
        return f"<Report {self.kind} {self.verdict}{where}>"
