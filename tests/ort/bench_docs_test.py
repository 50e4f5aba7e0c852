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
    # The file itself: written whole, its mode kept, no temporary file left;
    # a file without markers is left as it was.
    import stat
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "perf.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, 0o640)
        b.write_docs_block(path, "| new |")
        with open(path, encoding="utf-8") as f:
            written = f.read()
        if written != head + b.DOCS_BEGIN + "\n| new |\n" + b.DOCS_END + tail:
            sys.exit(f"FAIL: written file:\n{written!r}")
        if stat.S_IMODE(os.stat(path).st_mode) != 0o640:
            sys.exit("FAIL: the file's mode changed")
        bare = os.path.join(d, "bare.md")
        with open(bare, "w", encoding="utf-8") as f:
            f.write(head)
        try:
            b.write_docs_block(bare, "| new |")
            sys.exit("FAIL: a file without markers: no error")
        except ValueError:
            pass
        with open(bare, encoding="utf-8") as f:
            if f.read() != head:
                sys.exit("FAIL: a file without markers was changed")
        if sorted(os.listdir(d)) != ["bare.md", "perf.md"]:
            sys.exit(f"FAIL: files left behind: {sorted(os.listdir(d))}")
    # The real file carries exactly one pair.
    docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                        "performance.md")
    with open(docs, encoding="utf-8") as f:
        b.replace_docs_block(f.read(), "table")
    print("bench_docs: passed")


if __name__ == "__main__":
    main()
