"""The console service: the HTTP/JSON API and web console, a gRPC client of the router."""
