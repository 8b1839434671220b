"""The six built-in skills and their allowlists."""

from __future__ import annotations

import pytest

from riverbeam.agents import SANDBOX_TOOL_NAMES, Skill, builtin_skills, skill_by_name

SEED_SHIPPED = {
    "author": set(SANDBOX_TOOL_NAMES),
    "consume": set(),
    "summarize": {"list_tree", "read_file", "git_diff", "git_log"},
    "commit-notes": {"git_status", "git_diff", "git_log"},
    "review": {"list_tree", "read_file", "git_diff", "git_log"},
    "gfs-publish": set(),
}


def test_six_builtins_in_order() -> None:
    assert [s.name for s in builtin_skills()] == [
        "author",
        "consume",
        "summarize",
        "commit-notes",
        "review",
        "gfs-publish",
    ]


@pytest.mark.parametrize("skill", builtin_skills(), ids=lambda s: s.name)
def test_allowlists_match_the_seed(skill: Skill) -> None:
    shipped = set(skill.allowed_tools) & set(SANDBOX_TOOL_NAMES)
    assert shipped == SEED_SHIPPED[skill.name]


@pytest.mark.parametrize("skill", builtin_skills(), ids=lambda s: s.name)
def test_each_skill_has_a_real_prompt_and_description(skill: Skill) -> None:
    assert len(skill.system_prompt) > 300
    assert skill.description
    for tool in skill.allowed_tools:
        assert tool in skill.system_prompt, f"{skill.name} prompt never mentions {tool}"


def test_host_tools_named_by_allowlists() -> None:
    assert skill_by_name("consume").allowed_tools == ("search", "get_page")  # type: ignore[union-attr]
    assert skill_by_name("gfs-publish").allowed_tools == ("publish_docset",)  # type: ignore[union-attr]
    assert "review_change" in skill_by_name("review").allowed_tools  # type: ignore[union-attr]


def test_skill_by_name() -> None:
    author = skill_by_name("author")
    assert author is not None and author.allows("git_push") and not author.allows("search")
    assert skill_by_name("nope") is None
    assert builtin_skills() is not builtin_skills()
