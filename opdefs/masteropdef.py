"""Parse the MasterOpDef text (the markdown rendering of Qualcomm's op documentation) into plain data.

The text is irregular and this module's job is to absorb every irregularity in one place, so the
importer sees clean records. Each irregularity handled is named where it is handled:

* constraint/value bullets rendered as nested under a ``>`` quote are siblings, not children;
* formula blocks end with a stray ``Copy to clipboard`` line and indent their continuation lines;
* reference labels are spelled several ways ("Android NDK NeuralNetWorks", "Onnx", "Pytorch");
* headings carry LaTeX (``alpha (\\(\\alpha\\))``) and markdown escapes (``transpose\\_in0``);
* tensor headings may be variadic (``in[0..m]``, ``out[4..M]``) or fixed ranges (``in[1..4]``);
* defaults may be a quoted per-enum list; datatype notes may come per operation class;
* sections may be ``None`` (no parameters, and ``If`` has no outputs); Shape may be empty.

Every record keeps the 1-based line it came from so specs can cite the seed.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

_FIELD = re.compile(r"^- (Mandatory|Data type|Shape|Dynamic Shape|Default|Values|Constraints):\s*(.*)$")
_QUOTE_ITEM = re.compile(r"^>\s*- (.*)$")
_REF = re.compile(r"^- ([A-Za-z0-9 ]+): \[(.*?)\]\((.*?)\)\s*$")
_TENSOR = re.compile(r"^(in|out)\[(\d+)(?:\.\.(\d+|[A-Za-z]+))?\]$")

# Reference labels as spelled in the seed -> the catalogue they point to.
REFERENCE_KINDS = {
    "onnx": "onnx",
    "android ndk neuralnetworks": "nnapi",
    "android neuralnetworks": "nnapi",
    "tensorflow": "tensorflow",
    "pytorch": "pytorch",
    "qnn": "qnn",
    "caffe2": "caffe2",
    "alexnet": "paper",
}


def clean(text: str) -> str:
    """Undo markdown escapes and HTML entities (``channel\\_in`` -> ``channel_in``, ``&gt;`` -> ``>``)."""
    text = re.sub(r"\\([_*\[\]()#<>{}|`~!\\-])", r"\1", text)
    return html.unescape(text)


def heading_name(raw: str) -> tuple[str, str | None]:
    """``alpha (\\(\\alpha\\))`` -> ("alpha", "\\alpha"): the name and any LaTeX symbol beside it."""
    raw = raw.strip()
    latex = None
    m = re.match(r"^(.*?)\s*\(\\\((.*)\\\)\)$", raw)
    if m:
        raw, latex = m.group(1), m.group(2)
    return clean(raw).strip(), latex


@dataclass
class Item:
    """One quoted list entry (a constraint, an enum value, a default alternative)."""

    text: str
    line: int


@dataclass
class Entry:
    """A ``#### name`` block: an input, output or parameter."""

    heading: str
    line: int
    latex: str | None = None
    description: str = ""
    notes: list[str] = field(default_factory=list)  # "- Numerical: BACKEND_SPECIFIC" style bullets
    fields: dict[str, str] = field(default_factory=dict)
    field_lines: dict[str, int] = field(default_factory=dict)
    quoted: dict[str, list[Item]] = field(default_factory=dict)  # Constraints / Values / Default lists
    repeated: bool = False  # "This tensor is repeated" sentence present


@dataclass
class Reference:
    kind: str
    label: str
    name: str
    url: str
    line: int
    scope: str | None = None  # for per-operation references inside e.g. ElementWiseBinary


@dataclass
class Op:
    name: str
    line: int
    end_line: int
    description: str = ""
    formulas: list[str] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    deprecated: str | None = None
    inputs: list[Entry] = field(default_factory=list)
    params: list[Entry] = field(default_factory=list)
    outputs: list[Entry] = field(default_factory=list)
    sections_none: list[str] = field(default_factory=list)  # sections written as "None"


def parse_file(path: str | Path) -> list[Op]:
    return parse(Path(path).read_text(encoding="utf-8"))


def parse(text: str) -> list[Op]:
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith("## ")]
    ops = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else len(lines)
        ops.append(_parse_op(lines, s, e))
    return ops


def _strip_formulas(block: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], list[str]]:
    """Pull the ``Copy to clipboard`` code blocks out of a run of lines.

    A block is the paragraph that ends at that marker: its first line flush left, the rest indented
    by four spaces. The marker itself is an artefact of the web page and is dropped.
    """
    out: list[tuple[int, str]] = []
    formulas: list[str] = []
    for n, ln in block:
        if ln.strip() == "Copy to clipboard":
            para: list[str] = []
            while out and out[-1][1].strip() != "":
                para.append(out.pop()[1])
            para.reverse()
            formulas.append("\n".join(p[4:] if p.startswith("    ") else p for p in para).rstrip())
            continue
        out.append((n, ln))
    return out, formulas


def _prose(block: list[tuple[int, str]]) -> str:
    text = "\n".join(ln for _, ln in block).strip()
    text = re.sub(r"\n{3,}", "\n\n", text)
    return clean(text)


def _parse_op(lines: list[str], s: int, e: int) -> Op:
    op = Op(name=clean(lines[s][3:].strip()), line=s + 1, end_line=e)
    # Split into the preamble and the three ### sections.
    sec_starts = [i for i in range(s + 1, e) if lines[i].startswith("### ")]
    pre_end = sec_starts[0] if sec_starts else e
    pre = [(i + 1, lines[i]) for i in range(s + 1, pre_end)]
    pre, op.formulas = _strip_formulas(pre)
    kept: list[tuple[int, str]] = []
    scope = None
    for n, ln in pre:
        m = _REF.match(ln)
        bold = re.match(r"^\*\*([A-Za-z0-9_\\]+)\*\*\s*-", ln)
        if bold:
            scope = clean(bold.group(1))
        if m:
            label = m.group(1).strip()
            kind = REFERENCE_KINDS.get(label.lower(), "other")
            op.references.append(Reference(kind, label, clean(m.group(2)), m.group(3), n, scope))
            continue
        if ln.strip() == "References:":
            continue
        dep = re.match(r"^\*\*DEPRECATED:\*\*\s*(.*)$", ln)
        if dep:
            op.deprecated = clean(re.sub(r"\[(.*?)\]\(.*?\)", r"\1", dep.group(1))).strip()
            continue
        kept.append((n, ln))
    op.description = _prose(kept)
    for k, si in enumerate(sec_starts):
        se = sec_starts[k + 1] if k + 1 < len(sec_starts) else e
        title = lines[si][4:].strip()
        entries, none = _parse_section(lines, si + 1, se)
        target = {"Inputs": op.inputs, "Parameters": op.params, "Outputs": op.outputs}[title]
        target.extend(entries)
        if none:
            op.sections_none.append(title)
    return op


def _parse_section(lines: list[str], s: int, e: int) -> tuple[list[Entry], bool]:
    heads = [i for i in range(s, e) if lines[i].startswith("#### ")]
    body_before = [lines[i].strip() for i in range(s, heads[0] if heads else e) if lines[i].strip()]
    none = body_before == ["None"]
    entries = []
    for k, hi in enumerate(heads):
        he = heads[k + 1] if k + 1 < len(heads) else e
        entries.append(_parse_entry(lines, hi, he))
    return entries, none


def _parse_entry(lines: list[str], hi: int, he: int) -> Entry:
    name, latex = heading_name(lines[hi][5:])
    ent = Entry(heading=name, line=hi + 1, latex=latex)
    desc: list[tuple[int, str]] = []
    current_field: str | None = None
    i = hi + 1
    while i < he:
        ln = lines[i]
        m = _FIELD.match(ln)
        if m:
            current_field = m.group(1)
            ent.fields[current_field] = clean(m.group(2)).strip()
            ent.field_lines[current_field] = i + 1
            i += 1
            continue
        if ln.startswith(">"):
            # A quote block belongs to the field just opened (Constraints, Values or Default).
            items = ent.quoted.setdefault(current_field or "Constraints", [])
            qm = _QUOTE_ITEM.match(ln)
            if qm:  # every "- " inside a quote is a sibling, however far it is indented
                items.append(Item(clean(qm.group(1)).strip(), i + 1))
            i += 1
            continue
        if current_field is None:
            if ln.startswith("- "):
                ent.notes.append(clean(ln[2:]).strip())
            else:
                desc.append((i + 1, ln))
                if "This tensor is repeated" in ln:
                    ent.repeated = True
        i += 1
    desc, formulas = _strip_formulas(desc)
    text = _prose(desc)
    if formulas:
        text = (text + "\n\n" if text else "") + "\n\n".join(formulas)
    ent.description = text
    return ent


def tensor_heading(name: str) -> tuple[str, int, int | str | None] | None:
    """``in[2..m]`` -> ("in", 2, "m"); ``in[1..4]`` -> ("in", 1, 4); ``out[0]`` -> ("out", 0, None)."""
    m = _TENSOR.match(name)
    if not m:
        return None
    last = m.group(3)
    if last is not None and last.isdigit():
        return m.group(1), int(m.group(2)), int(last)
    return m.group(1), int(m.group(2)), last
