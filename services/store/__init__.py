"""The store service: serves riverbeam.v1.StoreService over an InMemoryStore or a PgBeamStore."""
