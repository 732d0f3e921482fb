"""CI check of the committed tree-sitter parser without the tree-sitter CLI.

Compiles src/parser.c and src/scanner.c with the C compiler, loads them
through the `tree-sitter` Python bindings, and then:
  * runs every corpus test in test/corpus/ (the expected trees, fields and
    positions aside, must match exactly);
  * parses every .chr file of examples/, stdlib/ and test/highlight/ and
    fails on any ERROR or MISSING node;
  * compiles the queries in queries/.
The highlight assertions need the CLI: `tree-sitter test` runs them
(see editors/README.md).
"""

import ctypes
import pathlib
import re
import subprocess
import sys
import tempfile

from tree_sitter import Language, Parser, Query

HERE = pathlib.Path(__file__).resolve().parent.parent
REPO = HERE.parent.parent


def load_language() -> Language:
    lib = pathlib.Path(tempfile.mkdtemp()) / "chr.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-O1", "-I", str(HERE / "src"),
         str(HERE / "src/parser.c"), str(HERE / "src/scanner.c"), "-o", str(lib)],
        check=True,
    )
    so = ctypes.cdll.LoadLibrary(str(lib))
    so.tree_sitter_chr.restype = ctypes.c_void_p
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return Language(new_capsule(so.tree_sitter_chr(), b"tree_sitter.Language", None))


def normalize(sexp: str) -> str:
    sexp = re.sub(r"\b\w+: ", "", sexp)
    return " ".join(sexp.replace("(", " ( ").replace(")", " ) ").split())


def corpus_cases(text: str):
    header = re.compile(r"^={3,}\n(.*?)\n={3,}\n", re.M)
    parts = header.split(text)
    for name, body in zip(parts[1::2], parts[2::2]):
        code, expected = re.split(r"\n-{3,}\n", body, maxsplit=1)
        yield name.strip(), code.strip("\n") + "\n", expected


def main() -> int:
    language = load_language()
    parser = Parser(language)
    failures, passed = [], 0

    for path in sorted((HERE / "test/corpus").glob("*.txt")):
        for name, code, expected in corpus_cases(path.read_text()):
            got = str(parser.parse(code.encode()).root_node)
            if normalize(got) == normalize(expected):
                passed += 1
            else:
                failures.append(f"{path.name}: {name}\n  expected {normalize(expected)}\n  got      {normalize(got)}")

    sources = [p for d in ("examples", "stdlib") for p in sorted((REPO / d).glob("*.chr"))]
    sources += sorted((HERE / "test/highlight").glob("*.chr"))
    for path in sources:
        root = parser.parse(path.read_bytes()).root_node
        if root.has_error:
            failures.append(f"{path.relative_to(REPO)}: parse tree has ERROR or MISSING nodes: {root}")
        else:
            passed += 1

    for path in sorted((HERE / "queries").glob("*.scm")):
        try:
            Query(language, path.read_text())
            passed += 1
        except Exception as err:  # the bindings raise several error types
            failures.append(f"{path.name}: {err}")

    for failure in failures:
        print(failure)
    print(f"tree-sitter: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
