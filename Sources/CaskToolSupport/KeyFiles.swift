import ArgumentParser
import Cask
import Foundation

/// The keys of an encrypted store, for every verb: `CASK_KEY_FILE` names one or more key files
/// separated by `:`, the current key first (previous keys after it). A key file holds the 32
/// bytes of an AES-256 key, raw or as 64 hex digits (whitespace around them is ignored). Kept
/// out of the command line so that a key is never in `ps` output or shell history.
package func toolEncryption() throws -> StoreEncryption? {
    guard let list = ProcessInfo.processInfo.environment["CASK_KEY_FILE"] else { return nil }
    guard !list.isEmpty else {
        // Set but empty (`CASK_KEY_FILE=$UNSET_VARIABLE`): a key was meant to be given. Writing
        // plaintext without a word would be the wrong guess.
        printError("cask: CASK_KEY_FILE is set but empty; the store was not opened: name the key file (`CASK_KEY_FILE=store.key cask ...`), or unset CASK_KEY_FILE for a store without encryption")
        throw Exit.usage
    }
    let paths = list.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    guard !paths.contains(where: \.isEmpty) else {
        printError("cask: CASK_KEY_FILE=\(list) has an empty entry: it must list key files separated by `:`, the current key's first (`CASK_KEY_FILE=new.key:old.key`)")
        throw Exit.usage
    }
    let keys = try paths.map(readKeyFile)
    do {
        return try StoreEncryption(currentKey: keys[0], previousKeys: Array(keys.dropFirst()))
    } catch {
        printError("cask: CASK_KEY_FILE: \(error)")
        throw Exit.usage
    }
}

/// One key file: 32 raw bytes, or 64 hex digits. A file that cannot be read exits 64 when the
/// path names nothing readable (the setting must change) and 74 when reading it failed (EIO...),
/// with the errno either way; the store is not opened.
private func readKeyFile(_ path: String) throws -> EncryptionKey {
    let data: [UInt8]
    do {
        // A key file is 32 to about 70 bytes; a FIFO, device or folder is refused before a read
        // could block or run on (InputReader.readRegularFile).
        data = try InputReader.readRegularFile(path: path, limit: 4096)
    } catch {
        if error.isNotARegularFile {
            printError("cask: CASK_KEY_FILE: \(path) is not a regular file (a FIFO, socket, device or folder); the store was not opened; name a file holding the key (32 bytes, or 64 hex digits)")
            throw Exit.usage
        }
        printError("cask: CASK_KEY_FILE: cannot \(error.call) the key file \(path): \(error.systemMessage) (errno \(error.errno)); "
                   + "the store was not opened; \(keyFileAdvice(error.errno))")
        throw error.exitCode
    }
    // 32 hex digits are half a hex key, not a raw key (32 random bytes are all hex digits with
    // probability (22/256)^32, about 10^-34).
    if data.count == EncryptionKey.byteCount, !data.allSatisfy(isHexDigit), let key = try? EncryptionKey(bytes: data) { return key }
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    if text.utf8.count == 2 * EncryptionKey.byteCount, text.utf8.allSatisfy(isHexDigit), let bytes = hexBytes(text),
       let key = try? EncryptionKey(bytes: bytes) { return key }
    printError("cask: CASK_KEY_FILE: \(path) is not a key: it must hold 32 bytes, or 64 hex digits (`openssl rand -hex 32 > store.key` makes one)")
    throw Exit.usage
}

private func keyFileAdvice(_ errno: Int32) -> String {
    switch errno {
    case ENOENT, ENOTDIR: return "check the path in CASK_KEY_FILE"
    case EACCES, EPERM: return "check the permissions of the key file and of its folders"
    case EISDIR: return "CASK_KEY_FILE must name files, not folders"
    case EIO: return "the device reported an I/O error: check the disk (dmesg), then run the command again"
    default: return "check the key file, then run the command again"
    }
}

private func isHexDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
        || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
}

private func hexBytes(_ text: String) -> [UInt8]? {
    var bytes: [UInt8] = []
    var chars = text.makeIterator()
    while let high = chars.next(), let low = chars.next() {
        guard let byte = UInt8(String([high, low]), radix: 16) else { return nil }
        bytes.append(byte)
    }
    return bytes
}
