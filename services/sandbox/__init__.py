"""The sandbox service: serves riverbeam.v1.SandboxService over a WorkspaceManager."""
