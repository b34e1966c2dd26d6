import ArgumentParser

// A main.swift rather than @main on the command, so that its async `run()` is chosen from an
// async context. (Installing NIO's event loops as Swift concurrency's global executor here was
// tried and removed: it measured no faster, and it deadlocked a graceful shutdown once.)

/// ArgumentParser's async entry point.
func runCommand() async {
    await MPinServerCommand.main(nil)
}
await runCommand()
