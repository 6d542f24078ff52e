"""The pydoc pages of one Python's standard library, for bench:quality's templated corpus.

Run by each Python version found (python3.9 ... python3.13): prints one JSON line per page,
{"family": "module:json" or "class:json.JSONDecoder", "python": "3.12", "text": ...}, the plain text
pydoc.render_doc gives for every public top-level module the version can import and every public class
defined in it, of the modules named on the command line (by default the running version's
sys.stdlib_module_names). Object addresses (" at 0x7f...", ctypes' " handle 7f...") differ from run to run:
they are written " at 0x...", " handle ...", and the caller sets PYTHONHASHSEED, so that every run renders the same pages.
"""
import contextlib
import io
import json
import pkgutil
import pydoc
import re
import sys
import warnings

# Modules that act when imported (open a browser, print, start a GUI or a test run) or that are not the
# library's reference pages.
SKIP = {"antigravity", "this", "idlelib", "test", "tkinter", "turtle", "turtledemo", "lib2to3", "ensurepip",
        "venv", "pydoc_data", "__main__", "__future__", "msilib", "winreg", "winsound", "msvcrt", "_winapi",
        "nt", "xxsubtype", "sre_compile", "sre_constants", "sre_parse"}


def module_names(given):
    names = given or sorted(getattr(sys, "stdlib_module_names", ()))
    return [n for n in names if not n.startswith("_") and n not in SKIP]


ADDRESS = re.compile(r"( at 0x| handle )[0-9a-fA-F]+")


def page(obj):
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ADDRESS.sub(r"\1...", pydoc.render_doc(obj, renderer=pydoc.plaintext))


def main(given):
    version = "%d.%d" % sys.version_info[:2]
    out = sys.stdout
    for name in module_names(given):
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = __import__(name)
        except BaseException:  # a module this build cannot import (no tkinter, no curses): not documented here
            continue
        try:
            out.write(json.dumps({"family": "module:" + name, "python": version, "text": page(module)}) + "\n")
        except BaseException:
            continue
        for attr, value in sorted(vars(module).items()):
            if attr.startswith("_") or not isinstance(value, type) or getattr(value, "__module__", None) != name:
                continue
            try:
                out.write(json.dumps({"family": "class:%s.%s" % (name, attr), "python": version, "text": page(value)}) + "\n")
            except BaseException:
                continue


if __name__ == "__main__":
    main(sys.argv[1:])
