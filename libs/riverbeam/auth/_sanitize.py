"""Request sanitising: what a caller may claim about itself and set in metadata."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from riverbeam.auth._principal import Principal, Role, canonical_metadata_key
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import (
    ActionResponseEnvelope,
    InvokeAuthContext,
    InvokePayload,
    InvokeRequest,
    ResumePayload,
    TurnConfig,
    updated_copy,
)
from riverbeam.types._copying import model_of_valid

__all__ = ["SanitizedInvoke", "sanitize_invoke", "sanitize_resume"]

R = TypeVar("R", bound=InvokePayload | ResumePayload)
InvokeT = TypeVar("InvokeT", bound=InvokePayload)


@dataclass(frozen=True, slots=True)
class SanitizedInvoke(Generic[R]):
    """A request cleaned for its principal.

    Attributes:
        request: A copy of the request with forbidden metadata removed and ``auth_context``
            set to the identity the run acts as.
        effective_user_id: The user the request acts for (``request.auth_context.user_id``).
        effective_org_id: That user's organisation, if known.
        acting_for_user: True when a backend or admin acts for a user other than itself.
        may_confirm: True only when the principal may approve and ``metadata.confirm`` is
            ``true`` in the cleaned request; the pipeline's ``confirm_allowed``.
        stripped: What was removed, for the log: metadata keys as sent, and
            ``memory_scopes[i]`` for single scopes dropped from a backend's list.
        replaced: The fields of ``request`` whose value cleaning changed (every other field
            is the caller's, as it came).
    """

    request: R
    effective_user_id: str
    effective_org_id: str | None
    acting_for_user: bool
    may_confirm: bool
    stripped: tuple[str, ...]
    replaced: frozenset[str] = frozenset()


def sanitize_invoke(
    request: InvokeT, principal: Principal, *, request_id: str | None = None
) -> SanitizedInvoke[InvokeT]:
    """Clean an invoke request for `principal`.

    Metadata keys ``confirm``, ``sandbox_root``, ``protected_refs`` and ``memory_scopes``
    (matched case-insensitively) are removed unless the principal's roles allow each; a
    backend keeps only memory scopes whose ``id`` is the effective user's or org's id (and
    whose optional ``org_id`` is the effective org); memory is read and written in the
    effective organisation only (``auth_context.org_id``).
    ``auth_context`` is replaced by the principal's identity, unless a backend or admin names
    a user in it, in which case that user is kept (``profile_id`` and ``mcp_token`` sent by
    the caller are kept in both cases). An InvokeRequest's action responses get their
    ``responder_id`` set as in `sanitize_resume`.

    Args:
        request: The caller's request (InvokePayload or InvokeRequest).
        principal: The authenticated caller.
        request_id: The id the cleaned copy gets when the request names none (the router
            names every request; done here, it costs no second copy).

    Returns:
        The cleaned request and the identity it acts as.

    Raises:
        RiverbeamError: BEM-052 when a principal that may not act for users names another
            user in ``auth_context.user_id``.
    """
    cleaning = _cleaning(request, principal)
    if request_id is not None and request.request_id is None:
        cleaning[0]["request_id"] = request_id
    return _sanitized(request, cleaning)


def sanitize_resume(request: ResumePayload, principal: Principal) -> SanitizedInvoke[ResumePayload]:
    """Clean a resume request for `principal`, as `sanitize_invoke` does.

    Besides metadata and ``auth_context``, each action response's ``responder_id`` is set to
    the effective user: who answered is recorded from authentication, never from the payload.
    Whether the principal may answer these actions at all is `check_may_approve`'s job.

    Raises:
        RiverbeamError: BEM-052 as for `sanitize_invoke`.
    """
    return _sanitized(request, _cleaning(request, principal))


# What sanitising changes in a request (the fields to set, by name) and the identity it found:
# effective user and org, acting for a user, may confirm, what was stripped.
_Cleaning = tuple[dict[str, Any], str, str | None, bool, bool, tuple[str, ...]]

# SanitizedInvoke is made by its slots' setters, as its frozen __init__ would fill them (its
# object.__setattr__ per field costs ~3,000 instructions an invoke more).
_new_sanitized = object.__new__
_set_request = SanitizedInvoke.__dict__["request"].__set__
_set_user = SanitizedInvoke.__dict__["effective_user_id"].__set__
_set_org = SanitizedInvoke.__dict__["effective_org_id"].__set__
_set_acting = SanitizedInvoke.__dict__["acting_for_user"].__set__
_set_may_confirm = SanitizedInvoke.__dict__["may_confirm"].__set__
_set_stripped = SanitizedInvoke.__dict__["stripped"].__set__
_set_replaced = SanitizedInvoke.__dict__["replaced"].__set__


def _sanitized(sent: InvokeT | ResumePayload, cleaning: _Cleaning) -> SanitizedInvoke[Any]:
    """The cleaned copy of `sent`, and what cleaning found (`SanitizedInvoke(...)`)."""
    update, user_id, org_id, acting, may_confirm, stripped = cleaning
    changed: list[str] = []
    for key, value in update.items():
        old = getattr(sent, key)
        # `value != old` without asking a model to compare: the same object is equal to itself,
        # and None equals no value of ours but None.
        if value is not old and (value is None or old is None or value != old):
            changed.append(key)
    out: SanitizedInvoke[Any] = _new_sanitized(SanitizedInvoke)
    _set_request(out, updated_copy(sent, update))
    _set_user(out, user_id)
    _set_org(out, org_id)
    _set_acting(out, acting)
    _set_may_confirm(out, may_confirm)
    _set_stripped(out, stripped)
    _set_replaced(out, frozenset(changed))
    return out


def _cleaning(request: InvokePayload | ResumePayload, principal: Principal) -> _Cleaning:
    auth, acting = _effective_auth(request.auth_context, principal)
    user_id = auth.user_id
    assert user_id is not None
    metadata, may_confirm, stripped = _clean_metadata(
        request.metadata, principal, user_id, auth.org_id
    )
    update: dict[str, Any] = {"metadata": metadata, "auth_context": auth}
    actions: list[ActionResponseEnvelope]
    if isinstance(request, InvokePayload):
        if request.turn_config is not None or request.session_config is not None:
            stripped += _clean_turn_configs(request, principal, update)
        actions = request.actions if isinstance(request, InvokeRequest) else []
    else:
        actions = request.actions if isinstance(request, ResumePayload) else []
    if actions:
        update["actions"] = [a.model_copy(update={"responder_id": user_id}) for a in actions]
    return (update, user_id, auth.org_id, acting, may_confirm, stripped)


def _clean_turn_configs(
    request: InvokePayload, principal: Principal, update: dict[str, Any]
) -> tuple[str, ...]:
    """Instructions in turn_config / session_config need a backend or admin.

    Anyone may narrow the tools (the runner refuses a name outside the agent's allowlist,
    BEM-220), for the turn or for their session; adding instructions changes what the agent
    is told to do, so a plain user's are removed. A response schema, time limit and token
    budget only narrow (both schemas apply; the smallest limit wins), so any caller may send
    them.
    """
    if principal.may_act_for_users():
        return ()
    stripped: list[str] = []
    for name in ("turn_config", "session_config"):
        config: TurnConfig | None = getattr(request, name)
        if config is None or not (config.prepend_instructions or config.append_instructions):
            continue
        update[name] = config.model_copy(
            update={"prepend_instructions": None, "append_instructions": None}
        )
        stripped.append(f"{name}.instructions")
    return tuple(stripped)


def _effective_auth(
    sent: InvokeAuthContext | None, principal: Principal
) -> tuple[InvokeAuthContext, bool]:
    if sent is None:  # the usual request: the principal's identity, nothing kept of the caller's
        return _auth_context(principal.subject, principal.org_id, None, None), False
    claimed_user = (sent.user_id if sent else None) or None
    claimed_org = (sent.org_id if sent else None) or None
    profile_id = (sent.profile_id if sent else None) or None
    mcp_token = (sent.mcp_token if sent else None) or None

    if claimed_user is not None and claimed_user != principal.subject:
        if not principal.may_act_for_users():
            raise RiverbeamError(
                ErrorCode.ACT_FOR_USER_DENIED,
                "auth_context.user_id names another user, and this caller is not a backend",
                field="auth_context.user_id",
            )
        if Role.ADMIN in principal.roles or principal.org_id is None:
            org_id = claimed_org or principal.org_id
        else:
            # A backend acts inside its own organisation only.
            org_id = principal.org_id
        return _auth_context(claimed_user, org_id, profile_id, mcp_token), True

    return _auth_context(principal.subject, principal.org_id, profile_id, mcp_token), False


def _auth_context(
    user_id: str, org_id: str | None, profile_id: str | None, mcp_token: str | None
) -> InvokeAuthContext:
    """`InvokeAuthContext(user_id=..., org_id=..., profile_id=..., mcp_token=...)`.

    Its four fields are plain optional strings, which validation keeps as they are: for
    values of exactly str (or None) the model is made without its validation pass (~10,000
    instructions an invoke); anything else is validated as before.
    """
    if (
        type(user_id) is str
        and (org_id is None or type(org_id) is str)
        and (profile_id is None or type(profile_id) is str)
        and (mcp_token is None or type(mcp_token) is str)
    ):
        return model_of_valid(
            InvokeAuthContext,
            {
                "user_id": user_id,
                "profile_id": profile_id,
                "org_id": org_id,
                "mcp_token": mcp_token,
            },
        )
    return InvokeAuthContext(
        user_id=user_id, org_id=org_id, profile_id=profile_id, mcp_token=mcp_token
    )


# canonical_metadata_key of a str key, remembered: a few keys come on every request.
_canonical_key = functools.lru_cache(maxsize=1024)(canonical_metadata_key)


def _clean_metadata(
    metadata: dict[str, Any] | None,
    principal: Principal,
    user_id: str,
    org_id: str | None,
) -> tuple[dict[str, Any] | None, bool, tuple[str, ...]]:
    if not metadata:
        return None, False, ()
    cleaned: dict[str, Any] = {}
    stripped: list[str] = []
    for key, value in metadata.items():
        canonical = _canonical_key(key) if type(key) is str else canonical_metadata_key(key)
        if canonical is None:
            cleaned[key] = value
        elif not principal.may_set_privileged_metadata(key):
            stripped.append(key)
        elif canonical == "memory_scopes" and Role.ADMIN not in principal.roles:
            scopes, dropped = _own_scopes(value, user_id, org_id)
            if scopes:
                cleaned[key] = scopes
                stripped.extend(f"{key}[{i}]" for i in dropped)
            else:
                stripped.append(key)
        else:
            cleaned[key] = value
    may_confirm = principal.may_approve_any() and cleaned.get("confirm") is True
    # Empty metadata is held as None, as the wire types do.
    return cleaned or None, may_confirm, tuple(stripped)


def _own_scopes(
    value: Any, user_id: str, org_id: str | None
) -> tuple[list[dict[str, Any]], list[int]]:
    """The scopes a backend may load: those whose id is the effective user's or org's.

    Memory is keyed by organisation (the run reads and writes the effective org's entries
    only), and a scope that names an organisation (`org_id`) other than the effective one is
    dropped too: equal user ids of two organisations never share a scope.
    """
    if not isinstance(value, list):
        return [], []
    allowed = {user_id} if org_id is None else {user_id, org_id}
    kept: list[dict[str, Any]] = []
    dropped: list[int] = []
    for index, scope in enumerate(value):
        if (
            isinstance(scope, dict)
            and isinstance(scope.get("name"), str)
            and isinstance(scope.get("id"), str)
            and scope["id"] in allowed
            and (scope.get("org_id") or None) in (None, org_id)
        ):
            kept.append(scope)
        else:
            dropped.append(index)
    return kept, dropped
