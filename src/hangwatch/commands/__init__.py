"""One module per subcommand. Each validates its arguments, calls the library, hands the result to a
renderer and returns an exit code; heavy imports happen inside, so `hangwatch --help` stays fast."""
