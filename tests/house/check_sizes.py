#!/usr/bin/env python3
"""The house's size rule (issue 57): no source file over MAX_FILE_LINES lines, no function over
MAX_FUNCTION_LINES lines, in every module's src/, include/ and cli/ (tests, benchmarks and fuzz targets
are not held to it: a test file is a list of cases, not a room).

Why a rule and not taste: the work piles into the room that already holds most of it (sim/src/workload.cpp
reached 1,746 lines, build_workload about 350), and a newcomer who must change one mechanism then reads a
file that holds six. The limits are the issue's: 1,000 lines a file, 150 lines a function.

Files and functions that were over the limit when the rule came in are listed in KNOWN_OVER below with the
size they had. They may shrink, never grow: a listed file or function that grows fails, and one that is
now within the limit fails too until its line here is removed (so the list only shortens).

Functions are found by a small C++ scanner, not a compiler: comments, strings and character literals are
blanked, then each '{' whose enclosing scopes are namespaces or classes and whose header holds a ')' opens
a function body (lambdas at namespace scope count as functions). Length = lines from the header's first
line to the closing brace. Usage: check_sizes.py [ROOT]; exit 0 when the rule holds, 1 with one line per
breach otherwise, 2 on bad usage.
"""
import os
import re
import sys

MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 150
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh")
SKIPPED_DIRS = {"tests", "bench", "fuzz", "build", ".git", "docs", "data"}

# path -> lines, or (path, function) -> lines, as measured when the rule came in (2026-12-07).
KNOWN_OVER = {
    ("planning/src/plan.cpp", "make_plan"): 329,
    ("calibrate/src/import_nccl_tests.cpp", "import_nccl_tests"): 266,
    ("reports/src/html_report.cpp", "summary_lines"): 179,
    ("calibrate/src/import_deepep.cpp", "import_deepep"): 178,
    ("calibrate/src/gpu/gemm_bench.cpp", "run_gemm_bench"): 177,
    ("validate/src/megatron_log.cpp", "parse_log"): 165,
}


def blank_comments_and_strings(text):
    """Returns text of the same length and line structure with comments, string and char literals blanked."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            # A digit separator (1'000) is not a char literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blank_preprocessor(code):
    """Blanks preprocessor lines (and their continuations): '#if __has_include(x)' is no declaration."""
    out, continued = [], False
    for line in code.split("\n"):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            out.append(" " * len(line))
        else:
            out.append(line)
    return "\n".join(out)


SCOPE_RE = re.compile(r"\b(namespace|extern)\b")
CLASS_RE = re.compile(r"\b(class|struct|union|enum)\b")
NAME_RE = re.compile(r"([~A-Za-z_][\w:~<>,\s]*?)\s*\((?!.*\()", re.S)


def functions(text):
    """Yields (name, first_line, last_line) of each function body at namespace or class scope."""
    code = blank_preprocessor(blank_comments_and_strings(text))
    stack = []  # one entry per open '{': 'ns', 'class', 'fn' or 'block'
    header_start = 0  # offset where the current declaration's text began
    fn_open = None  # (name, first line) of the function whose body is open at stack depth len(stack)
    fn_depth = -1
    for pos, c in enumerate(code):
        if c in ";}":
            if c == "}" and stack:
                kind = stack.pop()
                if kind == "fn" and len(stack) == fn_depth:
                    yield fn_open[0], fn_open[1], code.count("\n", 0, pos) + 1
                    fn_open, fn_depth = None, -1
            header_start = pos + 1
        elif c == "{":
            header = code[header_start:pos]
            outer_is_decl_scope = all(k in ("ns", "class") for k in stack)
            if not outer_is_decl_scope:
                stack.append("block")
            elif SCOPE_RE.search(header) and "(" not in header:
                stack.append("ns")
            elif CLASS_RE.search(header) and ")" not in header.split(":")[0]:
                stack.append("class")
            elif ")" in header and not header.rstrip().endswith("="):
                # A function body: the header is the declaration; its first line is the first non-blank one.
                offset = header_start + (len(header) - len(header.lstrip()))
                paren = header.find("(")
                name_part = header[:paren].split()
                name = name_part[-1] if name_part else "(lambda)"
                if name.endswith("]") or name == "=":
                    name = "(lambda)"
                fn_open = (name, code.count("\n", 0, offset) + 1)
                fn_depth = len(stack)
                stack.append("fn")
            else:
                stack.append("block")
            header_start = pos + 1
        elif c == ":" and pos + 1 < len(code) and code[pos + 1] != ":" and (pos == 0 or code[pos - 1] != ":"):
            # 'public:' and friends end a declaration's header inside a class.
            before = code[header_start:pos].strip()
            if before in ("public", "private", "protected"):
                header_start = pos + 1


def source_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("build"))
        for f in sorted(filenames):
            if f.endswith(SOURCE_SUFFIXES):
                yield os.path.join(dirpath, f)


def main(argv):
    if len(argv) > 2:
        print("usage: check_sizes.py [ROOT]", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), "..", ".."))
    breaches = []
    seen_known = set()
    for path in source_files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        checks = [(rel, rel, lines, MAX_FILE_LINES, "file")]
        for name, first, last in functions(text):
            checks.append(((rel, name), f"{rel}:{first}: {name}", last - first + 1, MAX_FUNCTION_LINES, "function"))
        for key, where, size, limit, what in checks:
            known = KNOWN_OVER.get(key)
            if known is not None:
                seen_known.add(key)
                if size > known:
                    breaches.append(f"{where}: {what} of {size} lines grew past its listed {known} (limit {limit})")
                elif size <= limit:
                    breaches.append(f"{where}: {what} of {size} lines is within {limit} now: remove its KNOWN_OVER line")
            elif size > limit:
                breaches.append(f"{where}: {what} of {size} lines, over the limit of {limit}")
    for key in sorted(set(KNOWN_OVER) - seen_known, key=str):
        breaches.append(f"{key}: listed in KNOWN_OVER but not found: remove its line")
    for b in breaches:
        print(b)
    if breaches:
        print(f"check_sizes: {len(breaches)} breach(es) of the size rule (tests/house/check_sizes.py says why)")
        return 1
    print("check_sizes: every file within %d lines, every function within %d" % (MAX_FILE_LINES, MAX_FUNCTION_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
