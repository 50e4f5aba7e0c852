#!/usr/bin/python3
"""bench_vs_torch.py --docs: the table goes between the two marker lines and
nothing else in the file changes; without exactly one pair of markers, in
order, it is an error (the caller then writes nothing)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import bench_vs_torch as b  # noqa: E402


def expect_error(text, what):
    try:
        b.replace_docs_block(text, "table")
    except ValueError:
        return
    sys.exit(f"FAIL: {what}: no error")


def main():
    head = "# Title\n\nintro, with <!-- other comment --> kept\n"
    tail = "\n## Next section\ntrailing text without a newline"
    text = head + b.DOCS_BEGIN + "\nold table\nold line 2\n" + b.DOCS_END + tail
    got = b.replace_docs_block(text, "| a | b |\n|---|---|\n| 1 | 2 |\n\n")
    want = head + b.DOCS_BEGIN + "\n| a | b |\n|---|---|\n| 1 | 2 |\n" + b.DOCS_END + tail
    if got != want:
        sys.exit(f"FAIL: replaced text:\n{got!r}\nwanted:\n{want!r}")
    # Replacing again with the same block changes nothing.
    if b.replace_docs_block(got, "| a | b |\n|---|---|\n| 1 | 2 |") != want:
        sys.exit("FAIL: a second replacement changed the text")
    # Empty block between adjacent markers.
    adjacent = head + b.DOCS_BEGIN + b.DOCS_END + tail
    if b.replace_docs_block(adjacent, "x") != head + b.DOCS_BEGIN + "\nx\n" + b.DOCS_END + tail:
        sys.exit("FAIL: adjacent markers")
    expect_error(head + tail, "no markers")
    expect_error(head + b.DOCS_BEGIN + tail, "no end marker")
    expect_error(head + b.DOCS_END + "\n" + b.DOCS_BEGIN + tail, "markers reversed")
    expect_error(text + b.DOCS_BEGIN, "two begin markers")
    # The real file carries exactly one pair.
    docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                        "performance.md")
    with open(docs, encoding="utf-8") as f:
        b.replace_docs_block(f.read(), "table")
    print("bench_docs: passed")


if __name__ == "__main__":
    main()
