"""Hostile input: every bad file gets a clear error or a finding naming the file and cell; nothing is followed,
executed or allowed to hang. The files are crafted here, byte by byte."""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest
from xlsx_craft import cell_xml, write_xlsx

from planner.ooxml import Limits, WorkbookError, read_workbook
from planner.recalc import recalc_file, recalc_file_isolated


def test_random_bytes_is_not_a_workbook(tmp_path: Path) -> None:
    p = tmp_path / "random.xlsx"
    p.write_bytes(os.urandom(4096))
    with pytest.raises(WorkbookError, match=r"random\.xlsx: not a workbook"):
        recalc_file(p, tmp_path / "out.xlsx")
    assert not (tmp_path / "out.xlsx").exists()


def test_truncated_zip(tmp_path: Path) -> None:
    good = write_xlsx(tmp_path / "good.xlsx", [cell_xml("A1", 1), cell_xml("A2", 2, "A1+1")])
    bad = tmp_path / "truncated.xlsx"
    bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(WorkbookError, match=r"truncated\.xlsx"):
        recalc_file(bad, tmp_path / "out.xlsx")


def test_zip_without_workbook(tmp_path: Path) -> None:
    p = tmp_path / "plain.xlsx"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(WorkbookError, match="no xl/workbook.xml"):
        read_workbook(p)


def test_zip_bomb_rejected_before_parsing(tmp_path: Path) -> None:
    bomb = b"<x>" + b" " * (20 * 1024 * 1024) + b"</x>"
    p = write_xlsx(tmp_path / "bomb.xlsx", [cell_xml("A1", 1)], extra_parts={"xl/bomb.xml": bomb})
    assert p.stat().st_size < 200_000
    with pytest.raises(WorkbookError, match="compression ratio"):
        read_workbook(p)
    with pytest.raises(WorkbookError, match="max_part_bytes"):
        read_workbook(p, Limits(max_part_bytes=1024 * 1024, max_ratio=1e9))
    with pytest.raises(WorkbookError, match="max_total_bytes"):
        read_workbook(p, Limits(max_total_bytes=1024 * 1024, max_ratio=1e9))


def test_billion_laughs_blocked(tmp_path: Path) -> None:
    dtd = (
        '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
        '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
    )
    p = write_xlsx(tmp_path / "lol.xlsx", [cell_xml("A1", "&lol3;")], prolog=dtd)
    with pytest.raises(WorkbookError, match=r"lol\.xlsx: hostile XML refused"):
        recalc_file(p, tmp_path / "out.xlsx")


def test_xxe_blocked(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-XXE")
    dtd = f'<!DOCTYPE x [<!ENTITY e SYSTEM "file://{secret}">]>'
    p = write_xlsx(tmp_path / "xxe.xlsx", [cell_xml("A1", "&e;")], prolog=dtd)
    with pytest.raises(WorkbookError, match="hostile XML refused"):
        read_workbook(p)


def test_external_references_are_reported_and_never_followed(tmp_path: Path) -> None:
    # a real workbook with a secret next to (and above) the submitted one
    write_xlsx(tmp_path / "secret.xlsx", [cell_xml("A1", "TOP-SECRET-VALUE")])
    sub = tmp_path / "sub"
    sub.mkdir()
    write_xlsx(sub.parent / "S.xlsx", [cell_xml("A1", "TOP-SECRET-VALUE")])
    p = write_xlsx(sub / "victim.xlsx", [
        cell_xml("A1", 0, "'[secret.xlsx]S'!A1"),
        cell_xml("A2", 0, "'../[secret.xlsx]S'!A1"),
        cell_xml("A3", 0, "[1]S!A1"),
        cell_xml("A4", 5),
        cell_xml("A5", 0, "A4*2"),
    ])
    before = hashlib.sha256(p.read_bytes()).hexdigest()
    out = sub / "out.xlsx"
    result = recalc_file(p, out)
    assert "TOP-SECRET-VALUE" not in repr(result.values)
    assert b"TOP-SECRET-VALUE" not in zipfile.ZipFile(out).read("xl/worksheets/sheet1.xml")
    ext = {(f.sheet, f.cell) for f in result.findings if f.code == "external-link"}
    assert ext == {("S", "A1"), ("S", "A2"), ("S", "A3")}
    assert result.values[("S", "A1")] == "#REF!"
    assert result.values[("S", "A5")] == 10
    assert hashlib.sha256(p.read_bytes()).hexdigest() == before


def test_external_link_part_is_reported(tmp_path: Path) -> None:
    rels = ('<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            'externalLink" Target="externalLinks/externalLink1.xml"/>')
    link_rels = ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
                 'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                 'relationships/externalLinkPath" Target="file:///etc/passwd.xlsx" TargetMode="External"/>'
                 '</Relationships>')
    p = write_xlsx(tmp_path / "linked.xlsx", [cell_xml("A1", 0, "[1]Sheet1!A1")], wb_rels_extra=rels,
                   extra_parts={"xl/externalLinks/externalLink1.xml": "<externalLink/>",
                                "xl/externalLinks/_rels/externalLink1.xml.rels": link_rels})
    assert read_workbook(p).external_links == ("file:///etc/passwd.xlsx",)
    result = recalc_file(p, tmp_path / "out.xlsx")
    messages = [f.message for f in result.findings if f.code == "external-link"]
    assert any("file:///etc/passwd.xlsx" in m for m in messages)
    assert any(m.startswith("S!A1") for m in messages)


def test_dde_and_unparsable_formulas_are_findings_not_aborts(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "dde.xlsx", [
        cell_xml("A1", 0, "cmd|' /C calc'!A0"),
        cell_xml("A2", 0, "SUM(1,,,(("),
        cell_xml("A3", 2),
        cell_xml("A4", 0, "A3+40"),
    ])
    result = recalc_file(p, tmp_path / "out.xlsx")
    codes = {(f.code, f.cell) for f in result.findings}
    assert ("dde-formula", "A1") in codes
    assert ("unparsable-formula", "A2") in codes
    assert result.values[("S", "A4")] == 42
    assert result.values[("S", "A2")] == "#NAME?"


def test_whole_column_and_huge_dimension_are_bounded(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "huge.xlsx", [
        cell_xml("A1", 1), cell_xml("B1", 2), cell_xml("C1", 0, "SUM(A:A)+SUM(B:B)"),
    ], dimension="A1:XFD1048576")
    result = recalc_file_isolated(p, tmp_path / "out.xlsx", limits=Limits(time_limit_s=60))
    assert result.values[("S", "C1")] == 3


def test_time_limit_stops_the_child(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "slow.xlsx", [cell_xml("A1", 1), cell_xml("A2", 0, "A1+1")])
    with pytest.raises(WorkbookError, match=r"slow\.xlsx: recalc exceeded the time limit"):
        recalc_file_isolated(p, tmp_path / "out.xlsx", limits=Limits(time_limit_s=0.05))


def test_memory_limit_stops_the_child(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "mem.xlsx", [cell_xml("A1", 1), cell_xml("A2", 0, "A1+1")])
    with pytest.raises(WorkbookError, match=r"mem\.xlsx"):
        recalc_file_isolated(p, tmp_path / "out.xlsx", limits=Limits(memory_limit_bytes=64 * 1024 * 1024))
    assert not (tmp_path / "out.xlsx").exists()


def test_macros_are_kept_and_never_run(tmp_path: Path) -> None:
    src = Path(__file__).parent / "data" / "excel-made" / "macro01.xlsm"
    out = tmp_path / "out.xlsm"
    recalc_file(src, out)
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(out) as b:
        assert a.read("xl/vbaProject.bin") == b.read("xl/vbaProject.bin")
    assert read_workbook(out).has_vba


def test_circular_reference_is_a_finding(tmp_path: Path) -> None:
    p = write_xlsx(tmp_path / "circ.xlsx", [cell_xml("A1", 0, "B1+1"), cell_xml("B1", 0, "A1+1")])
    result = recalc_file(p, tmp_path / "out.xlsx")
    assert {(f.code, f.cell) for f in result.findings} >= {("circular-reference", "A1")}
