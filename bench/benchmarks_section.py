"""One generated section of BENCHMARKS.md, between its markers: what the section scripts
(throughput_section.py, cache_memory_section.py) share."""
import argparse
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def write_section(path, begin, end, text):
    """Replaces the text from `begin` to `end` in the file at `path` with `text` (which carries
    both markers), or appends it when the file has no such section yet."""
    path = pathlib.Path(path)
    current = path.read_text()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    merged = pattern.sub(lambda _: text, current) if pattern.search(current) else current.rstrip() + "\n\n" + text + "\n"
    path.write_text(merged)


def main(description, begin, end, section):
    """The command line of a section script: --benchmarks FILE (default BENCHMARKS.md)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--benchmarks", default=str(ROOT / "BENCHMARKS.md"))
    args = parser.parse_args()
    write_section(args.benchmarks, begin, end, section())
