import Foundation
import Testing
import CaskFormat
@testable import Cask

/// Whether libfiu's `fiu-run` is installed (package fiu-utils), for fault-injection tests.
let fiuRunIsInstalled = shellSucceeds("command -v fiu-run")

/// The `cask` tool with bad input and failing output (issue 14): every case ends with a clear
/// message and a documented status (64 bad usage, 74 output error), never a trap, and nothing
/// already stored is lost.
@Suite struct CLIInputTests {
    /// A store holding `k` = `v` (pinned-free, no TTL).
    func store() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        #expect(try runCask(["put", dir.path, "k", "v"]).0 == 0)
        return dir
    }

    /// The keys `cask ls --json` lists.
    func listedKeys(_ dir: TemporaryDirectory) throws -> [String] {
        struct Item: Decodable { var key: String }
        return try JSONDecoder().decode([Item].self, from: Data(try runCask(["ls", dir.path, "--json"]).1.utf8)).map(\.key)
    }

    @Test(arguments: ["nan", "inf", "-inf", "1e300", "-5", "0", "0.0001ms", "abc", "5x", ""])
    func aBadTimeToLiveIsAUsageErrorAndKeepsTheValue(ttl: String) throws {
        let dir = try store()
        let (status, _, err) = try runCask(["put", dir.path, "k", "new", "--ttl", ttl])
        #expect(status == 64, "--ttl \(ttl): \(err)")
        #expect(err.contains("--ttl"), "\(err)")
        #expect(try runCask(["get", dir.path, "k"]).1 == "v")
    }

    @Test func durationsAndSizesTakeUnits() throws {
        let dir = try store()
        #expect(try runCask(["put", dir.path, "t", "x", "--ttl", "90s"]).0 == 0)
        #expect(try runCask(["put", dir.path, "u", "x", "--ttl", "7d"]).0 == 0)
        let (_, json, _) = try runCask(["ls", dir.path, "--json"])
        struct Item: Decodable { var key: String; var writeTime: Int64; var expiryTime: Int64? }
        let items = try JSONDecoder().decode([Item].self, from: Data(json.utf8))
        let t = try #require(items.first { $0.key == "t" }), u = try #require(items.first { $0.key == "u" })
        #expect(abs((t.expiryTime ?? 0) - t.writeTime - 90_000) < 2_000)
        #expect(abs((u.expiryTime ?? 0) - u.writeTime - 7 * 86_400_000) < 2_000)
        #expect(try runCask(["trim", dir.path, "--size", "1MiB"]).0 == 0)
        for bad in ["-1", "2X", "nan", "1e30GiB", "1.5", "0.5B"] {
            let (status, _, err) = try runCask(["trim", dir.path, "--size", bad])
            #expect(status == 64 && err.contains("--size"), "--size \(bad): \(err)")
        }
        #expect(try runCask(["get", dir.path, "k"]).1 == "v")
    }

    /// Negative numbers reach the option's own check (ArgumentParser alone took `-5` for an
    /// option and said the value was missing), and absurd demo sizes are refused.
    @Test func negativeAndHugeCountsNameTheirOption() throws {
        let dir = try store()
        for arguments in [["ls", dir.path, "--limit", "-5"], ["ls", dir.path, "--limit=-5"],
                          ["demo", dir.path + "-demo", "--items", "-5"], ["demo", dir.path + "-demo", "--blobs", "-1"],
                          ["demo", dir.path + "-demo", "--items", "9223372036854775807"],
                          ["trim", dir.path, "--date", "-5"]] {
            let (status, _, err) = try runCask(arguments)
            let option = arguments.first { $0.hasPrefix("--") }!.split(separator: "=")[0]
            #expect(status == 64 && err.contains(option) && !err.contains("Missing value"), "\(arguments): \(err)")
        }
        #expect(try runCask(["get", dir.path, "k"]).1 == "v")
    }

    /// A negative number where a positional number goes (a segment id) is read by the parser
    /// as an option; the message says what it is, not only that the argument is missing.
    @Test func aNegativePositionalNumberIsNamed() throws {
        let dir = try store()
        for arguments in [["dump", dir.path, "-5"], ["dump", dir.path, "-0.5", "--json"]] {
            let (status, out, err) = try runCask(arguments)
            #expect(status == 64 && out.isEmpty && err.contains("\(arguments[2]) is a negative number"), "\(arguments): \(err)")
        }
        #expect(try runCask(["get", dir.path, "k"]).1 == "v")
    }

    /// A backup into the store's own folder (or below it, through `..` or a link), or onto a
    /// file, is refused as bad usage, and nothing is written there; a negative option value gets one message, not
    /// the parser's and the negative-number hint both; dump escapes control characters in keys.
    @Test func backupIntoItsOwnStoreIsRefusedAndMessagesStaySingle() throws {
        let dir = try store()
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        for destination in [dir.path, dir.file("sub"), dir.path + "/../" + (dir.path as NSString).lastPathComponent + "/x"] {
            let (status, _, err) = try runCask(["backup", dir.path, destination])
            #expect(status == 64 && err.contains("inside the store folder"), "\(destination): \(err)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == before)
        let other = TemporaryDirectory(), file = other.file("a-file")   // a file as the destination: bad usage too
        try Data("keep".utf8).write(to: URL(fileURLWithPath: file))
        let (fileStatus, _, fileErr) = try runCask(["backup", dir.path, file])
        #expect(fileStatus == 64 && fileErr.contains("is a file, not a folder") && fileErr.contains(file), "\(fileErr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep")
        let (limitStatus, _, limitErr) = try runCask(["ls", dir.path, "--limit", "-1"])
        #expect(limitStatus == 64 && !limitErr.contains("is a negative number"), "\(limitErr)")
        #expect(try runCask(["put", dir.path, "line\nbreak\u{1b}[31m", "x"]).0 == 0)
        let (_, dumped, _) = try runCask(["dump", dir.path, "1"])
        #expect(dumped.contains("line\\nbreak\\x1b[31m") && !dumped.contains("\u{1b}"), "\(dumped)")
    }

    /// `put --file` reads pipes and devices, and says what is wrong with a path it cannot read.
    @Test func putReadsAFileFromAPipeOrADevice() throws {
        let dir = try store()
        let fifo = dir.file("value.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            _ = "piped value".withCString { write(fd, $0, 11) }
            close(fd)
        }
        writer.start()
        #expect(try runCask(["put", dir.path, "p", "--file", fifo]).0 == 0)
        #expect(try runCask(["get", dir.path, "p"]).1 == "piped value")
        #expect(try runCask(["put", dir.path, "empty", "--file", "/dev/null"]).0 == 0)
        #expect(try runCask(["get", dir.path, "empty"]) == (0, "", ""))
        #expect(try listedKeys(dir).sorted() == ["empty", "k", "p"])
    }

    /// A value file that is missing, a folder, or not readable is bad input (64), not a store
    /// failure (it exited 3): the message names the path, the error, its errno and the fix, and
    /// nothing is stored. A folder is read with read(2), which fails with EISDIR: the read
    /// loop's error path, on --file and on standard input alike.
    @Test func aValueFileThatCannotBeReadIsBadInputAndStoresNothing() throws {
        let dir = try store()
        let cases: [(String, [String], [String])] = [
            ("missing", ["--file", dir.file("absent")], [dir.file("absent"), "No such file or directory (errno 2)", "check the path"]),
            ("below a file", ["--file", dir.file("0000000001.cask/x")], ["Not a directory (errno 20)", "check the path"]),
            ("a folder", ["--file", dir.path], [dir.path, "Is a directory (errno 21)", "give --file a file"]),
        ]
        for (what, arguments, parts) in cases {
            let (status, _, err) = try runCask(["put", dir.path, "new"] + arguments)
            #expect(status == 64 && parts.allSatisfy(err.contains) && err.contains("nothing was stored"), "\(what): \(status) \(err)")
        }
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let (_, out) = try runShell("\(cask) put \(dir.path) new < \(dir.path); echo \" status=$?\"")
        #expect(out.contains("status=64") && out.contains("standard input: Is a directory (errno 21)"), "\(out)")
        if canRunAsNobody {
            try Data("secret".utf8).write(to: URL(fileURLWithPath: dir.file("secret")))
            chmod(dir.file("secret"), 0o600)
            let (_, denied) = try runShell("setpriv --reuid=65534 --regid=65534 --clear-groups \(cask) put \(dir.path) new --file \(dir.file("secret")); echo \" status=$?\"")
            #expect(denied.contains("status=64") && denied.contains(dir.file("secret")) && denied.contains("Permission denied (errno 13)")
                    && denied.contains("permissions"), "\(denied)")
        }
        #expect(try listedKeys(dir) == ["k"])
    }

    /// read(2) failing with EIO half-way (libfiu's fault injection) names the file or standard
    /// input and the errno, exits 74 (an I/O error on the command's input) and stores nothing;
    /// Foundation's reader said "NSCocoaErrorDomain error 256".
    @Test(.enabled(if: fiuRunIsInstalled, "needs fiu-run (apt-get install fiu-utils) to make read(2) fail with EIO"))
    func anIOErrorReadingTheValueNamesTheFileAndTheErrno() throws {
        let dir = try store()
        let value = dir.file("value")
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: value))
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let fiu = "fiu-run -f '' -x -c 'enable name=posix/io/rw/read,failinfo=5'"
        for (command, source) in [("put \(dir.path) new --file \(value)", value), ("put \(dir.path) new < \(value)", "standard input")] {
            let (_, out) = try runShell("\(fiu) \(cask) \(command); echo \" status=$?\"")
            #expect(out.contains("status=74") && out.contains("cannot read the value from \(source): Input/output error (errno 5)")
                    && out.contains("nothing was stored") && out.contains("check the disk"), "\(command): \(out)")
        }
        #expect(try listedKeys(dir) == ["k"])
    }

    /// `verify` while every pread(2) fails with EIO (libfiu): the ranges are reported as
    /// unreadable, never as damage, and the status is 3 ("could not be used: I/O failure"), not
    /// 1 ("problems found"); the fault suite found status 1 under random read faults. The same
    /// verify without faults finds the store clean.
    @Test(.enabled(if: fiuRunIsInstalled, "needs fiu-run (apt-get install fiu-utils) to make pread(2) fail with EIO"))
    func verifyWhoseReadsFailSaysUnreadableWithStatus3() throws {
        let dir = try store()
        for i in 0..<8 { #expect(try runCask(["put", dir.path, "k\(i)", String(repeating: "v", count: 3000)]).0 == 0) }
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let fiu = "fiu-run -f '' -x -c 'enable name=posix/io/rw/pread,failinfo=5'"
        let (_, out) = try runShell("\(fiu) \(cask) verify \(dir.path) 2>&1; echo \" status=$?\"")
        #expect(out.contains("status=3") && out.contains("UNREADABLE") && out.contains("errno 5")
                && !out.contains("DAMAGED") && out.contains("0 problems") && out.contains("run cask verify again"), "\(out)")
        let (status, clean, _) = try runCask(["verify", dir.path])
        #expect(status == 0 && clean.contains("9 records") && clean.contains("OK"), "\(clean)")
    }

    /// `verify --repair` while every pread(2) fails with EIO (libfiu): not repaired, status 3,
    /// and no byte of the store changes (it gave up every unreadable record, so a device that
    /// failed every read lost the whole store). Only `--give-up-unreadable` drops them, and
    /// only with `--repair`.
    @Test(.enabled(if: fiuRunIsInstalled, "needs fiu-run (apt-get install fiu-utils) to make pread(2) fail with EIO"))
    func repairRefusesAStoreWhoseReadsFail() throws {
        let dir = try store()
        for i in 0..<8 { #expect(try runCask(["put", dir.path, "k\(i)", String(repeating: "v", count: 3000)]).0 == 0) }
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let before = try folderDigest(dir.path).filter { $0.key != "LOCK" }
        let fiu = "fiu-run -f '' -x -c 'enable name=posix/io/rw/pread,failinfo=5'"
        let (_, out) = try runShell("\(fiu) \(cask) verify \(dir.path) --repair 2>&1; echo \" status=$?\"")
        #expect(out.contains("status=3") && out.contains("not repairing") && out.contains("--give-up-unreadable"), "\(out)")
        #expect(try folderDigest(dir.path).filter { $0.key != "LOCK" } == before, "a refused repair changed the store")
        #expect(try listedKeys(dir).count == 9)
        let (status, _, err) = try runCask(["verify", dir.path, "--give-up-unreadable"])
        #expect(status == 64 && err.contains("only applies with --repair"), "\(err)")
    }

    /// `trim --date` takes a plain ISO 8601 date (midnight UTC, as its help says) and full
    /// date-times with or without a zone (a plain date was refused with status 64).
    @Test func trimTakesAPlainDateOrADateTime() throws {
        let dir = try store()
        for date in ["2000-01-01", "2000-01-01T10:00:00Z", "2000-01-01T10:00:00", "2000-01-01T10:00:00+02:00", "2000-01-01T10:00:00.5-05:00"] {
            let (status, out, err) = try runCask(["trim", dir.path, "--date", date])
            #expect(status == 0 && out == "removed 0 items; 1 remain\n", "--date \(date): \(out) \(err)")
        }
        for bad in ["2027-02-30", "2027-01-01T25:00:00Z", "2027-01-01T10:00:00Zjunk", "01/02/2027"] {
            let (status, _, err) = try runCask(["trim", dir.path, "--date", bad])
            #expect(status == 64 && err.contains("--date") && err.contains("midnight UTC"), "--date \(bad): \(err)")
        }
        let help = try runCask(["trim", "--help"]).1.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("a plain date means midnight UTC"), "\(help)")
        let (status, out, _) = try runCask(["trim", dir.path, "--date", "2100-01-01"])
        #expect(status == 0 && out == "removed 1 items; 0 remain\n", "\(out)")
    }

    @Test func aNegativeCountIsAUsageErrorAndTrimReportsWhatItRemoved() throws {
        let dir = try store()
        for i in 0..<4 { #expect(try runCask(["put", dir.path, "k\(i)", "x"]).0 == 0) }
        let (refused, _, err) = try runCask(["trim", dir.path, "--count=-1"])
        #expect(refused == 64 && err.contains("--count"), "\(err)")
        #expect(try listedKeys(dir).count == 5)
        let (status, out, _) = try runCask(["trim", dir.path, "--count", "2"])
        #expect(status == 0)
        #expect(out == "removed 3 items; 2 remain\n", "\(out)")
    }

    @Test(arguments: [["get"], ["rm"], ["pin"], ["unpin"], ["put", "value"]])
    func anEmptyKeyIsAUsageError(verb: [String]) throws {
        let dir = try store()
        let (status, _, err) = try runCask([verb[0], dir.path, ""] + verb.dropFirst())
        #expect(status == 64 && err.contains("key must not be empty"), "\(verb): \(err)")
    }

    @Test func keysAreNamedByTheirBytesWithKeyHex() throws {
        let dir = try store()
        #expect(try runCask(["put", dir.path, "--key-hex", "6b6579", "hexed"]).0 == 0)
        #expect(try runCask(["get", dir.path, "key"]).1 == "hexed")
        #expect(try runCask(["get", dir.path, "--key-hex", "6B6579"]).1 == "hexed")
        for bad in ["6b657", "zz", "fffe"] {
            let (status, _, err) = try runCask(["get", dir.path, "--key-hex", bad])
            #expect(status == 64, "\(bad): \(err)")
        }
        // Bytes that are not UTF-8 on the command line are refused, not turned into U+FFFD.
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let (status, out) = try runShell("\(cask) put \(dir.path) \"$(printf '\\377\\376')\" one; echo \" status=$?\"")
        #expect(out.contains("status=64") && out.contains("not valid UTF-8"), "\(out)")
        #expect(try listedKeys(dir).count == 2)
        _ = status
    }

    @Test func controlCharactersInKeysAreEscapedInTablesAndHexInJSON() throws {
        let dir = try store()
        #expect(try runCask(["put", dir.path, "a\nb\u{1b}[31m", "x"]).0 == 0)
        let (_, table, _) = try runCask(["ls", dir.path])
        #expect(table.contains("a\\nb\\x1b[31m"), "\(table)")
        #expect(table.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 3, "\(table)")
        let (_, json, _) = try runCask(["ls", dir.path, "--json"])
        #expect(json.contains("\"keyHex\":\"610a621b5b33316d\""), "\(json)")
    }

    @Test func outputErrorsEndWithAMessageAndStatus74() throws {
        let dir = try store()
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        for (command, what) in [("get \(dir.path) k > /dev/full", "full"), ("get \(dir.path) k >&-", "closed"),
                                ("ls \(dir.path) > /dev/full", "ls full"), ("stats \(dir.path) --json > /dev/full", "stats full"),
                                ("--help > /dev/full", "help full"), ("ls --help > /dev/full", "verb help full"),
                                ("--version > /dev/full", "version full")] {
            let (_, out) = try runShell("\(cask) \(command); echo \" status=$?\"")
            #expect(out.contains("status=74") && out.contains("write error on standard output"), "\(what): \(out)")
        }
        // A full standard error never traps: the status is the command's own.
        let (_, missing) = try runShell("\(cask) get \(dir.path) absent 2>/dev/full; echo \" status=$?\"")
        #expect(missing.contains("status=1"), "\(missing)")
        let (_, usage) = try runShell("\(cask) get 2>/dev/full; echo \" status=$?\"")
        #expect(usage.contains("status=64"), "\(usage)")
        #expect(try runCask(["get", dir.path, "k"]).1 == "v")
    }

    @Test func systemErrorsNameThePathAndTheFix() throws {
        let dir = TemporaryDirectory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("afile")))
        let (notDirectory, _, err) = try runCask(["put", dir.file("afile/store"), "k", "v"])
        #expect(notDirectory == 3 && err.contains(dir.file("afile")) && err.contains("not a folder"), "\(err)")
        guard canRunAsNobody, let cask = caskExecutable() else { return }
        #expect(try runCask(["put", dir.file("store"), "k", "v"]).0 == 0)
        try letOthersRead(dir.file("store"))
        let (_, denied) = try runShell("setpriv --reuid=65534 --regid=65534 --clear-groups \(cask) put \(dir.file("store")) k2 v; echo \" status=$?\"")
        #expect(denied.contains("status=3") && denied.contains("Permission denied") && denied.contains(dir.file("store"))
                && denied.contains("opens with isReadOnly"), "\(denied)")
        // A backup whose destination cannot be written names the destination, not the store.
        try FileManager.default.createDirectory(atPath: dir.file("locked"), withIntermediateDirectories: false)
        chmod(dir.file("locked"), 0o555)
        let (_, backup) = try runShell("setpriv --reuid=65534 --regid=65534 --clear-groups \(cask) backup \(dir.file("store")) \(dir.file("locked/copy")); echo \" status=$?\"")
        #expect(backup.contains("status=3") && backup.contains(dir.file("locked/copy")) && backup.contains("Permission denied")
                && !backup.contains("store folder"), "\(backup)")
        #expect(try runCask(["get", dir.file("store"), "k"]).1 == "v")
    }

    @Test func harnessOptionsAreValidatedToo() throws {
        for arguments in [["bench", "--count=-1"], ["bench", "--value-size=-1"], ["bench", "--runs", "0"], ["populate", "/tmp/x", "--count=-5"]] {
            let (status, _, err) = try runHarness(arguments)
            #expect(status == 64, "\(arguments): \(err)")
        }
    }

    /// `cask` alone is a usage error (64) with the help on standard error; `--help` is not.
    @Test func noVerbIsAUsageError() throws {
        let (status, out, err) = try runCask([])
        #expect(status == 64 && out.isEmpty && err.contains("SUBCOMMANDS"), "\(status) \(err)")
        let (helpStatus, help, _) = try runCask(["--help"])
        #expect(helpStatus == 0 && help.contains("SUBCOMMANDS"))
    }

    @Test func versionIsPrinted() throws {
        let (status, out, _) = try runCask(["--version"])
        #expect(status == 0 && out.hasPrefix("cask ") && out.contains("format version \(Format.newestReadableVersion)") && Format.newestReadableVersion == 8, "\(out)")
    }
}
