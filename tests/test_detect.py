"""The inferred heading detectors: what each takes for a heading, and what it must not."""

from __future__ import annotations

import pytest

from chunkproof import make_document, parse_blocks
from chunkproof.document.headings import bold_line, caps_line, infer_heading, numbered_line
from chunkproof.evaluation.scoring.structure import predicted_headings
from conftest import SAMPLE

WARNING_BOLD = "**DO NOT DISCONNECT POWER DURING A FIRMWARE TRANSFER**"
WARNING_CAPS = "WARNING: RISK OF ELECTRIC SHOCK WHEN THE MAINS ADAPTER IS WIRED DIRECTLY"


def sample_doc(doc_id: str, infer: bool = False):
    text = (SAMPLE / doc_id).read_bytes().decode("utf-8")
    return make_document(doc_id, text, infer_headings=infer)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("**Access requests**", "Access requests"),
        ("__Access requests__", "Access requests"),
        ("**Access requests**\r\n", "Access requests"),
        ("  **Recovery codes**  ", "Recovery codes"),
        (WARNING_BOLD, None),  # a warning: its first words say so
        ("**Never share a recovery code over chat.**", None),  # a sentence, and a warning
        ("**Do not reuse your password anywhere else.**", None),
        ("**Token**: a secret that identifies a script.", None),  # bold-led definition
        ("Some **bold** words in a sentence", None),
        ("*Access requests*", None),  # emphasis is not strong
        ("**Access requests**\n**Recovery codes**", None),  # two lines: a paragraph
        ("**Read every one of these steps before you start the update**", None),  # too long
        ("**Access** **requests**", None),
    ],
)
def test_bold_line(text, title):
    assert bold_line(text) == title


def test_bold_line_cannot_tell_a_bold_reminder_from_a_title():
    """A short bold line with no full stop looks exactly like a title: a measured error."""
    assert bold_line("**Bring your badge on your first day**") == (
        "Bring your badge on your first day"
    )


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("3.1 Deadlines", (2, "3.1 Deadlines")),
        ("1. INTRODUCTION", (1, "1. INTRODUCTION")),  # the number as written
        ("5.9.2 Parameter defaults", (3, "5.9.2 Parameter defaults")),
        ("2.4   Enrolment ", (2, "2.4 Enrolment")),
        # numbered list items and procedure steps written as sentences
        ("1. Copy the firmware image file to the top folder of the USB drive.", None),
        ("4. Press and release the SETUP button once.", None),
        ("3. make sure the lid is closed", None),
        ("30 days of readings are kept", None),
        ("1.5 m of cable is supplied", None),
        ("2. Note the serial number", None),  # starts with a warning word
        ("Section 3.1 Deadlines", None),
        ("3.1", None),
    ],
)
def test_numbered_line(text, found):
    assert numbered_line(text) == found


def test_numbered_step_without_a_full_stop_looks_like_a_heading_on_its_own():
    """Only its neighbours can tell: see the block-level rule below."""
    assert numbered_line("3. Release the pressure") == (1, "3. Release the pressure")


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("SAFETY NOTICES", "SAFETY NOTICES"),
        ("6. SPECIFICATIONS", "6. SPECIFICATIONS"),  # caps_line alone; numbered wins first
        (WARNING_CAPS, None),
        ("CAUTION: HOT SURFACE", None),
        (WARNING_BOLD, None),  # bold marks are literal asterisks in plain text
        ("OK", None),  # fewer than three letters
        ("Steady green", None),
        ("PLEASE KEEP THIS MANUAL WITH THE INSTALLATION RECORDS FOR THE SITE", None),
    ],
)
def test_caps_line(text, title):
    assert caps_line(text) == title


@pytest.mark.parametrize(
    ("text", "markdown", "found"),
    [
        ("**Access requests**", True, (2, "Access requests", "inferred_bold_line")),
        ("1. INTRODUCTION", True, None),  # Markdown gets bold-line headings only
        ("SAFETY NOTICES", True, None),
        ("**Access requests**", False, None),  # plain text: asterisks are text
        ("3.1 Deadlines", False, (2, "3.1 Deadlines", "inferred_numbered")),
        ("SAFETY NOTICES", False, (1, "SAFETY NOTICES", "inferred_caps")),
        ("SAFETY\nNOTICES", False, None),
        ("SAFETY\rNOTICES", False, None),  # a lone CR is a line break too
        (WARNING_BOLD, True, None),
        (WARNING_BOLD, False, None),
        (WARNING_CAPS, False, None),
    ],
)
def test_infer_heading(text, markdown, found):
    assert infer_heading(text, markdown) == found


def test_steps_that_follow_each_other_are_a_list_not_headings():
    text = "3.2 Firmware update\n\n1. Copy the image\n2. Insert the drive\n3. Press SETUP\n"
    headings = [b for b in parse_blocks(text, False) if b.is_heading]
    assert [(b.title, b.provenance) for b in headings] == [
        ("3.2 Firmware update", "inferred_numbered")
    ]


def test_sample_manual_traps_are_not_headings():
    doc = sample_doc("manuals/perch-200-field-gateway.txt")
    lines = {h.line for h in predicted_headings(doc)}
    text = doc.text.splitlines()
    assert text[11].startswith("WARNING:") and 12 not in lines
    assert text[95] == WARNING_BOLD and 96 not in lines
    steps = [88, 90, 92, 93, 98, 101, 103]  # the seven-step USB firmware procedure
    assert [text[n - 1][:2] for n in steps] == [f"{i}." for i in range(1, 8)]
    assert not lines & set(steps)


@pytest.mark.parametrize("infer", [False, True])
def test_wiki_bold_titles_are_found_only_when_inferring(infer):
    doc = sample_doc("wiki/it-access-handbook.md", infer)
    found = {h.line: h.provenance for h in predicted_headings(doc)}
    bold_titles = {10, 24, 36, 49, 56, 64}
    assert found[1] == "markdown_atx"
    assert (bold_titles <= set(found)) is infer
    assert 22 not in found and 43 not in found  # the two bold warning lines
