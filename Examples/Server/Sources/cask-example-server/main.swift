import CaskRedis
import ExampleServer
import Foundation
import Hummingbird

// swift run --package-path Examples/Server cask-example-server [folder] [port] [redis-port]
// With a Redis port, instances started with the same one share their cache (Many machines).
let arguments = CommandLine.arguments
var settings = ServerSettings(folder: arguments.count > 1 ? arguments[1] : NSTemporaryDirectory() + "cask-example-server")
if arguments.count > 2, let port = Int(arguments[2]) { settings.address = .hostname("127.0.0.1", port: port) }
if arguments.count > 3, let port = Int(arguments[3]) { settings.redis = RedisConfiguration(host: "127.0.0.1", port: port) }
let upstream = SlowUpstream(delay: .milliseconds(200))
do {
    try await buildApplication(settings, upstream: upstream).runService()
} catch {
    FileHandle.standardError.write(Data("cask-example-server: \(error)\n".utf8))
    exit(1)
}
