"""One module per `mcqlens` subcommand; each exposes `register(subparsers)`."""
