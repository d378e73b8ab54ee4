"""One-line messages for failures of the model or the exporter."""

_LIMIT = 400


class ExportError(RuntimeError):
    """An exporter failed. str() is one line: which exporter, then the
    exporter's own error shortened to its root cause
    ("dynamo export failed: TorchExportError: UserError: Could not guard on
    data-dependent expression ..."). The original exception is __cause__."""

    def __init__(self, exporter, error):
        self.exporter = exporter
        super().__init__(f"{exporter} export failed: {one_line(error)}")


def one_line(error, limit=_LIMIT):
    """'<Type>: <first line>' of an exception; when it was raised from another
    (torch's exporters wrap the real error, sometimes twice), the outer type
    followed by the innermost cause's type and first line."""
    chain = [error]
    while chain[-1].__cause__ is not None and len(chain) < 16:
        chain.append(chain[-1].__cause__)
    root = chain[-1]
    text = f"{type(root).__name__}: {_first_line(root)}"
    if root is not error:
        text = f"{type(error).__name__}: {text}"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _first_line(error):
    for line in str(error).splitlines():
        line = line.strip()
        if line and not line.startswith("#"):  # torch's messages open with markdown headings
            return line
    return "(no message)"
