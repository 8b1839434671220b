"""Generated protobuf and gRPC code for riverbeam.v1. Do not edit; run `make proto`."""
