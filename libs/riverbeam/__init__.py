"""Riverbeam: an LLM agent runtime served as gRPC microservices."""

__version__ = "0.1.0"
