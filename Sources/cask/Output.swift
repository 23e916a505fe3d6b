import CaskToolSupport

/// Every line the commands print goes through ``Console`` (checked `write(2)`), so that a full or
/// closed standard output ends the command with a message and status 74, never a trap and never
/// a silent success. Shadows the standard library's `print` inside this module.
func print(_ text: String) {
    Console.out(text + "\n")
}
