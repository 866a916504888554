import ArgumentParser
import FlipbookService

/// `flipbook settings`: every setting of `flipbook serve` with its environment variable, default
/// and meaning — the configuration reference, in the terminal or (`--markdown`) as the tables of
/// docs/configuration.md, which `make docs` writes from it.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "List every setting: its key, environment variable, default and meaning.")

    @Flag(help: "Print the Markdown tables of docs/configuration.md instead.")
    var markdown = false

    func run() {
        print(markdown ? SettingsReference.markdown() : SettingsReference.text(), terminator: "")
    }
}
