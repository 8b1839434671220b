from riverbeam.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FileChange(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FILE_CHANGE_UNSPECIFIED: _ClassVar[FileChange]
    FILE_CHANGE_ADDED: _ClassVar[FileChange]
    FILE_CHANGE_MODIFIED: _ClassVar[FileChange]
    FILE_CHANGE_DELETED: _ClassVar[FileChange]
    FILE_CHANGE_UNTRACKED: _ClassVar[FileChange]
    FILE_CHANGE_TYPECHANGE: _ClassVar[FileChange]
FILE_CHANGE_UNSPECIFIED: FileChange
FILE_CHANGE_ADDED: FileChange
FILE_CHANGE_MODIFIED: FileChange
FILE_CHANGE_DELETED: FileChange
FILE_CHANGE_UNTRACKED: FileChange
FILE_CHANGE_TYPECHANGE: FileChange

class Fence(_message.Message):
    __slots__ = ("run_id", "epoch")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    epoch: int
    def __init__(self, run_id: _Optional[str] = ..., epoch: _Optional[int] = ...) -> None: ...

class RevokeFenceRequest(_message.Message):
    __slots__ = ("run_id", "min_epoch")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    MIN_EPOCH_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    min_epoch: int
    def __init__(self, run_id: _Optional[str] = ..., min_epoch: _Optional[int] = ...) -> None: ...

class RevokeFenceResponse(_message.Message):
    __slots__ = ("min_epoch",)
    MIN_EPOCH_FIELD_NUMBER: _ClassVar[int]
    min_epoch: int
    def __init__(self, min_epoch: _Optional[int] = ...) -> None: ...

class Workspace(_message.Message):
    __slots__ = ("name", "origin", "branch", "head")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    HEAD_FIELD_NUMBER: _ClassVar[int]
    name: str
    origin: str
    branch: str
    head: str
    def __init__(self, name: _Optional[str] = ..., origin: _Optional[str] = ..., branch: _Optional[str] = ..., head: _Optional[str] = ...) -> None: ...

class CreateWorkspaceRequest(_message.Message):
    __slots__ = ("name", "branch", "origin")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    name: str
    branch: str
    origin: str
    def __init__(self, name: _Optional[str] = ..., branch: _Optional[str] = ..., origin: _Optional[str] = ...) -> None: ...

class CreateWorkspaceResponse(_message.Message):
    __slots__ = ("workspace",)
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    workspace: Workspace
    def __init__(self, workspace: _Optional[_Union[Workspace, _Mapping]] = ...) -> None: ...

class EnsureWorkspaceRequest(_message.Message):
    __slots__ = ("name", "branch", "origin")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    name: str
    branch: str
    origin: str
    def __init__(self, name: _Optional[str] = ..., branch: _Optional[str] = ..., origin: _Optional[str] = ...) -> None: ...

class EnsureWorkspaceResponse(_message.Message):
    __slots__ = ("workspace", "created")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    workspace: Workspace
    created: bool
    def __init__(self, workspace: _Optional[_Union[Workspace, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class GetWorkspaceRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetWorkspaceResponse(_message.Message):
    __slots__ = ("workspace",)
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    workspace: Workspace
    def __init__(self, workspace: _Optional[_Union[Workspace, _Mapping]] = ...) -> None: ...

class ListWorkspacesRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListWorkspacesResponse(_message.Message):
    __slots__ = ("workspaces", "next_page_token")
    WORKSPACES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    workspaces: _containers.RepeatedCompositeFieldContainer[Workspace]
    next_page_token: str
    def __init__(self, workspaces: _Optional[_Iterable[_Union[Workspace, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteWorkspaceRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteWorkspaceResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CheckoutBranchRequest(_message.Message):
    __slots__ = ("workspace", "branch", "create", "fence")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    CREATE_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    branch: str
    create: bool
    fence: Fence
    def __init__(self, workspace: _Optional[str] = ..., branch: _Optional[str] = ..., create: _Optional[bool] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class CheckoutBranchResponse(_message.Message):
    __slots__ = ("branch",)
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    branch: str
    def __init__(self, branch: _Optional[str] = ...) -> None: ...

class ListTreeRequest(_message.Message):
    __slots__ = ("workspace", "path", "fence")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    fence: Fence
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class ListTreeResponse(_message.Message):
    __slots__ = ("path", "files", "truncated")
    PATH_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    path: str
    files: _containers.RepeatedScalarFieldContainer[str]
    truncated: bool
    def __init__(self, path: _Optional[str] = ..., files: _Optional[_Iterable[str]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class ReadFileRequest(_message.Message):
    __slots__ = ("workspace", "path", "fence")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    fence: Fence
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class ReadFileResponse(_message.Message):
    __slots__ = ("path", "text", "size", "truncated", "binary")
    PATH_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    BINARY_FIELD_NUMBER: _ClassVar[int]
    path: str
    text: str
    size: int
    truncated: bool
    binary: bool
    def __init__(self, path: _Optional[str] = ..., text: _Optional[str] = ..., size: _Optional[int] = ..., truncated: _Optional[bool] = ..., binary: _Optional[bool] = ...) -> None: ...

class WriteFileRequest(_message.Message):
    __slots__ = ("workspace", "path", "body", "fence", "expect_blob")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    EXPECT_BLOB_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    body: str
    fence: Fence
    expect_blob: str
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., body: _Optional[str] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ..., expect_blob: _Optional[str] = ...) -> None: ...

class WriteFileResponse(_message.Message):
    __slots__ = ("path", "bytes_written")
    PATH_FIELD_NUMBER: _ClassVar[int]
    BYTES_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    path: str
    bytes_written: int
    def __init__(self, path: _Optional[str] = ..., bytes_written: _Optional[int] = ...) -> None: ...

class GitStatusRequest(_message.Message):
    __slots__ = ("workspace", "fence")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    fence: Fence
    def __init__(self, workspace: _Optional[str] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class GitFileStatus(_message.Message):
    __slots__ = ("path", "staged", "unstaged")
    PATH_FIELD_NUMBER: _ClassVar[int]
    STAGED_FIELD_NUMBER: _ClassVar[int]
    UNSTAGED_FIELD_NUMBER: _ClassVar[int]
    path: str
    staged: FileChange
    unstaged: FileChange
    def __init__(self, path: _Optional[str] = ..., staged: _Optional[_Union[FileChange, str]] = ..., unstaged: _Optional[_Union[FileChange, str]] = ...) -> None: ...

class GitStatusResponse(_message.Message):
    __slots__ = ("branch", "head", "entries", "truncated")
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    HEAD_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    branch: str
    head: str
    entries: _containers.RepeatedCompositeFieldContainer[GitFileStatus]
    truncated: bool
    def __init__(self, branch: _Optional[str] = ..., head: _Optional[str] = ..., entries: _Optional[_Iterable[_Union[GitFileStatus, _Mapping]]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class GitDiffRequest(_message.Message):
    __slots__ = ("workspace", "fence")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    fence: Fence
    def __init__(self, workspace: _Optional[str] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class GitDiffResponse(_message.Message):
    __slots__ = ("staged", "unstaged", "files", "truncated")
    STAGED_FIELD_NUMBER: _ClassVar[int]
    UNSTAGED_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    staged: str
    unstaged: str
    files: int
    truncated: bool
    def __init__(self, staged: _Optional[str] = ..., unstaged: _Optional[str] = ..., files: _Optional[int] = ..., truncated: _Optional[bool] = ...) -> None: ...

class GitLogRequest(_message.Message):
    __slots__ = ("workspace", "limit", "fence")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    limit: int
    fence: Fence
    def __init__(self, workspace: _Optional[str] = ..., limit: _Optional[int] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class GitLogEntry(_message.Message):
    __slots__ = ("id", "summary", "author", "email", "time")
    ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    id: str
    summary: str
    author: str
    email: str
    time: int
    def __init__(self, id: _Optional[str] = ..., summary: _Optional[str] = ..., author: _Optional[str] = ..., email: _Optional[str] = ..., time: _Optional[int] = ...) -> None: ...

class GitLogResponse(_message.Message):
    __slots__ = ("commits",)
    COMMITS_FIELD_NUMBER: _ClassVar[int]
    commits: _containers.RepeatedCompositeFieldContainer[GitLogEntry]
    def __init__(self, commits: _Optional[_Iterable[_Union[GitLogEntry, _Mapping]]] = ...) -> None: ...

class GitAddRequest(_message.Message):
    __slots__ = ("workspace", "path", "fence")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    path: str
    fence: Fence
    def __init__(self, workspace: _Optional[str] = ..., path: _Optional[str] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class GitAddResponse(_message.Message):
    __slots__ = ("paths", "count", "truncated")
    PATHS_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    paths: _containers.RepeatedScalarFieldContainer[str]
    count: int
    truncated: bool
    def __init__(self, paths: _Optional[_Iterable[str]] = ..., count: _Optional[int] = ..., truncated: _Optional[bool] = ...) -> None: ...

class GitCommitRequest(_message.Message):
    __slots__ = ("workspace", "message", "fence")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    message: str
    fence: Fence
    def __init__(self, workspace: _Optional[str] = ..., message: _Optional[str] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class GitCommitResponse(_message.Message):
    __slots__ = ("id", "branch", "summary")
    ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    id: str
    branch: str
    summary: str
    def __init__(self, id: _Optional[str] = ..., branch: _Optional[str] = ..., summary: _Optional[str] = ...) -> None: ...

class GitPushRequest(_message.Message):
    __slots__ = ("workspace", "ref", "fence", "expect_head", "expect_origin")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    EXPECT_HEAD_FIELD_NUMBER: _ClassVar[int]
    EXPECT_ORIGIN_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    ref: str
    fence: Fence
    expect_head: str
    expect_origin: str
    def __init__(self, workspace: _Optional[str] = ..., ref: _Optional[str] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ..., expect_head: _Optional[str] = ..., expect_origin: _Optional[str] = ...) -> None: ...

class PreviewActionRequest(_message.Message):
    __slots__ = ("workspace", "tool", "ref", "path", "body", "fence")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    FENCE_FIELD_NUMBER: _ClassVar[int]
    workspace: str
    tool: str
    ref: str
    path: str
    body: str
    fence: Fence
    def __init__(self, workspace: _Optional[str] = ..., tool: _Optional[str] = ..., ref: _Optional[str] = ..., path: _Optional[str] = ..., body: _Optional[str] = ..., fence: _Optional[_Union[Fence, _Mapping]] = ...) -> None: ...

class PreviewActionResponse(_message.Message):
    __slots__ = ("preview",)
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    preview: _types_pb2.ActionPreview
    def __init__(self, preview: _Optional[_Union[_types_pb2.ActionPreview, _Mapping]] = ...) -> None: ...

class GitPushResponse(_message.Message):
    __slots__ = ("branch", "remote_ref", "commit")
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    REMOTE_REF_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    branch: str
    remote_ref: str
    commit: str
    def __init__(self, branch: _Optional[str] = ..., remote_ref: _Optional[str] = ..., commit: _Optional[str] = ...) -> None: ...
