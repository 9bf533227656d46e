"""What other capabilities ask of bug refinement (RA9), in one place: whether an issue is refined and its
recorded verdict (``/bugfix``, the root-cause board), whether it is a story and its gate (``story_gate``,
``STORY_NOT_REFINED``), the bug as its verdict reads it (``bug_as_read``: the description and the reporter's
answers in comments, for the bugfix pull request and the hypothesis it quotes), the RA9 document as its
author wrote it (the regression-test slot of section 7, the onboarding's preview of a verdict), the
sections' names in each language (the onboarding's issue templates), and how much of a body a reader reads
and the note that says a text was read in part (``clip_report``, ``cut_note``: the design forks and the
backlog cut an issue's body as a report is cut, and say so alike)."""

from __future__ import annotations

from handlers.bug_refinement import sections as sections
from handlers.bug_refinement.bot import refine_command as refine_command
from handlers.bug_refinement.bug_kind import RA9_SECTIONS as RA9_SECTIONS
from handlers.bug_refinement.bug_kind import is_bug_report as is_bug_report
from handlers.bug_refinement.document import BUG_SECTION_NAMES as BUG_SECTION_NAMES
from handlers.bug_refinement.document import MAX_REPORT_CHARS as MAX_REPORT_CHARS
from handlers.bug_refinement.document import RECIPE_SUBSECTION_NAMES as RECIPE_SUBSECTION_NAMES
from handlers.bug_refinement.document import STORY_SECTION_NAMES as STORY_SECTION_NAMES
from handlers.bug_refinement.document import Document as Document
from handlers.bug_refinement.document import clip_report as clip_report
from handlers.bug_refinement.document import find_sections as find_sections
from handlers.bug_refinement.document import find_subsections as find_subsections
from handlers.bug_refinement.document import parse_document as parse_document
from handlers.bug_refinement.document import strip_html_comments as strip_html_comments
from handlers.bug_refinement.effects import STORY_NOT_REFINED as STORY_NOT_REFINED
from handlers.bug_refinement.effects import StoryGate as StoryGate
from handlers.bug_refinement.effects import is_issue_refined as is_issue_refined
from handlers.bug_refinement.effects import story_gate as story_gate
from handlers.bug_refinement.effects import story_refusal as story_refusal
from handlers.bug_refinement.effects import trusted_verdict as trusted_verdict
from handlers.bug_refinement.formats import is_common_bug_report as is_common_bug_report
from handlers.bug_refinement.formats import read_report as read_report
from handlers.bug_refinement.merged import observed_text as observed_text
from handlers.bug_refinement.render import cut_note as cut_note
from handlers.bug_refinement.render import questions as questions
from handlers.bug_refinement.replies import bug_as_read as bug_as_read
from handlers.bug_refinement.report import Report as Report
from handlers.bug_refinement.report import report_of as report_of
from handlers.bug_refinement.rules import BugVerdict as BugVerdict
from handlers.bug_refinement.rules import RecordedVerdict as RecordedVerdict
from handlers.bug_refinement.rules import blockers_for as blockers_for
from handlers.bug_refinement.rules import document_language as document_language
from handlers.bug_refinement.rules import refine_bug as refine_bug
from handlers.bug_refinement.sections import Language as Language
