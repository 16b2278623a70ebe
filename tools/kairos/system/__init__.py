"""System descriptions: parse and validate (parse.py), pack into a bootable
image (pack.py), analyse (analysis.py). docs/system-description.md."""
