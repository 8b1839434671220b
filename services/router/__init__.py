"""The router service: the public RiverbeamService."""
