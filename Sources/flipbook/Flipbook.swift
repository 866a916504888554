import ArgumentParser

/// The `flipbook` command: inspect animated images, extract their frames, and serve them.
@main
struct Flipbook: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flipbook",
        abstract: "Browser-exact frames of animated images (GIF, APNG, WebP).",
        subcommands: [
            ServeCommand.self, InfoCommand.self, FramesCommand.self, FrameCommand.self,
            HealthcheckCommand.self, SignCommand.self, PreviewCommand.self, StoryboardCommand.self, ImportCommand.self,
            SettingsCommand.self,
        ])
}
