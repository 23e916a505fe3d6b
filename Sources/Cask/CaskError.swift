import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every failure Cask reports. Each case names the problem and, in its description, the fix.
///
/// Failures never leave a store half-changed in memory: when an operation throws, what was
/// stored before the call is still readable.
public enum CaskError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store directory is already open, in this process or another (`ownerPID` when known;
    /// the caller's own pid when another instance in this process holds it, which the
    /// description says in those words).
    case storeLocked(path: String, ownerPID: Int32?)
    /// A file in the store does not start with Cask's magic bytes.
    case notACaskStore(file: String)
    /// A read-only open found no store at `path` yet: the folder is missing, empty, or holds
    /// no segment. Only a writing open creates a store.
    case noStoreYet(path: String)
    /// The store id file (`path`, `STOREID`) of an encrypted store is damaged (`reason` says
    /// how), or missing while a segment's seals bind the store's id (format version 8), so no
    /// sealed value could be trusted: the store was not opened and nothing was changed
    /// (format-spec.md, "Store id").
    case storeIDUnusable(path: String, reason: String)
    /// A file was written by a newer format version than this build understands.
    case unsupportedFormatVersion(file: String, found: UInt32, supported: UInt32)
    /// A key was empty.
    case emptyKey
    /// A key's UTF-8 form is longer than the store allows (bytes).
    case keyTooLong(length: Int, maximum: Int)
    /// A value is larger than the store allows (bytes).
    case valueTooLarge(size: Int, maximum: Int)
    /// A system call failed. `errno` is the C error number; `operation` names the call.
    case io(operation: String, path: String, errno: Int32)
    /// Bytes on disk failed their checksum or structure check.
    case corruption(file: String, offset: Int64, reason: String)
    /// The store was closed; no further operations are possible on this instance.
    case closed
    /// An item's record (`size` bytes: header, key and stored value) would take more than the
    /// whole byte limit (`budget` = `byteLimit`); it was not stored and nothing was evicted
    /// for it.
    case exceedsByteLimit(key: String, size: Int, budget: Int)
    /// A cached value exists but is not a `type` (it was stored as another type, or with
    /// another coder). The item is kept.
    case typeMismatch(key: String, type: String, reason: String)
    /// The store was opened with ``StoreOptions/isReadOnly``, and the call would change it.
    case readOnly(path: String)
    /// An option was out of its documented range.
    case invalidOption(String)
    /// A cached value could not be encoded or decoded by the cache's coder.
    case coding(key: String, reason: String)
    /// The store's folder or one of its files (`path`) may be written by users other than its
    /// owner (`mode`: its permission bits), so its values could be changed under the app: the
    /// store was not opened.
    case unsafePermissions(path: String, mode: UInt16)
    /// A segment (`path`) is sealed with a key whose id (`keyID`) is not among the ids of the
    /// keys the open was given (`given`: empty when ``StoreOptions/encryption`` is nil), so its
    /// values cannot be read: the store was not opened and nothing was changed.
    case encryptionKeyMissing(path: String, keyID: UInt32, given: [UInt32])
    /// ``StoreOptions/encryption`` is set but the store holds unencrypted records (`path`, a
    /// segment of them): encryption is turned on for a new or emptied store only. Nothing was
    /// changed.
    case unencryptedStore(path: String)
    /// A store file (`path`) is a symbolic link, not a regular file (a FIFO, device, folder), or
    /// owned by another user than the store's folder (`reason` says which): Cask never reads or
    /// writes a store file it did not make (format-spec.md, "Permissions"). Nothing was changed.
    case foreignFile(path: String, reason: String)

    /// Whether the file system ran out of space (ENOSPC) or the file hit its size limit (EFBIG):
    /// freeing space and retrying can succeed.
    public var isOutOfSpace: Bool {
        if case .io(_, _, let code) = self { return code == ENOSPC || code == EFBIG }
        return false
    }

    /// What went wrong, naming the path, and the fix.
    public var description: String {
        switch self {
        case let .storeLocked(path, pid) where pid == getpid():
            return "store at \(path) is already open in this process (another DiskStore or CaskCache instance on the same directory); close that instance first, or share it (both are Sendable)"
        case let .storeLocked(path, pid):
            let owner = pid.map { "process \($0)" } ?? "another process or handle"
            return "store at \(path) is open in \(owner); close it there first"
        case let .notACaskStore(file):
            return "not a Cask store: \(file) is not Cask's (a store directory holds only LOCK, INDEX, *.cask and *.hint files); check the path"
        case let .noStoreYet(path):
            return "no store at \(path) yet: a read-only open reads an existing store; open it once for writing (without isReadOnly) to create it, or check the path"
        case let .storeIDUnusable(path, reason):
            return "\(path) \(reason), so the store's sealed values cannot be trusted; the store was not opened and nothing was changed: restore that file from a backup of this store (never from another store). If none is left, its values are lost: remove the store's folder to start empty (a cache refills)"
        case let .unsupportedFormatVersion(file, found, supported):
            return "format version \(found) in \(file) is newer than this cask (\(supported)); upgrade cask"
        case let .readOnly(path):
            return "store at \(path) is open read-only; open it without isReadOnly to change it"
        case .emptyKey:
            return "keys must not be empty"
        case let .keyTooLong(length, maximum):
            return "key is \(length) bytes of UTF-8; the maximum is \(maximum)"
        case let .valueTooLarge(size, maximum):
            return "value is \(size) bytes; the maximum is \(maximum) (see StoreOptions.maximumValueSize)"
        case let .io(operation, path, code):
            let text = String(cString: strerror(code))
            return "\(operation) failed on \(path): \(text) (errno \(code))\(Self.advice(forErrno: code))"
        case let .corruption(file, offset, reason):
            return "corruption in \(file) at offset \(offset): \(reason); run `cask verify`"
        case .closed:
            return "the store is closed"
        case let .invalidOption(text):
            return "invalid option: \(text)"
        case let .exceedsByteLimit(key, size, budget):
            return "item \"\(key)\" needs \(size) bytes on disk, more than the byte limit of \(budget) bytes; it was not stored: raise StoreLimits.byteLimit or store it elsewhere"
        case let .typeMismatch(key, type, reason):
            return "value for key \"\(key)\" is not a \(type) (\(reason)); read it as the type it was stored as, or overwrite it (the item was kept)"
        case let .coding(key, reason):
            return "value for key \"\(key)\" could not be coded: \(reason)"
        case let .encryptionKeyMissing(path, keyID, given) where given.isEmpty:
            return "\(path) is encrypted (key id \(Self.hex(keyID))) and no key was given; the store was not opened: set StoreOptions.encryption with that key (cask: CASK_KEY_FILE=<key file>)"
        case let .encryptionKeyMissing(path, keyID, given):
            return "\(path) is sealed with key id \(Self.hex(keyID)), which is none of the keys given (\(given.map(Self.hex).joined(separator: ", "))); the store was not opened and nothing was changed: give that key (as current or previous key). If it is lost, its values are too: remove the store's folder to start empty"
        case let .unencryptedStore(path):
            return "\(path) holds unencrypted records, and encryption is on; the store was not opened: encryption is turned on for a new store only (a cache refills: remove the folder), or open it without encryption"
        case let .foreignFile(path, reason):
            return "\(path) \(reason), so Cask did not open it and changed nothing: a store's files are regular files its owner made. Remove it (`rm \(path)`; a cache refills), or move the store's folder, not its files, where you want it"
        case let .unsafePermissions(path, mode):
            return "\(path) may be written by other users (mode \(String(mode, radix: 8))), so a value there could be changed under the app; the store was not opened: run `chmod go-w \(path)` (or `chmod -R go-rwx` on the store's folder)"
        }
    }
}

extension CaskError {
    /// A key id as it is printed: 8 hex digits.
    static func hex(_ id: UInt32) -> String { StoreEncryption.keyIDText(id) }

    /// What to do about a failed system call, by its errno ("" when there is nothing specific).
    /// It speaks of "that path" (the one the message names), not of the store: the path may be
    /// a backup's destination.
    static func advice(forErrno code: Int32) -> String {
        switch code {
        case ENOSPC, EFBIG: return "; free disk space or lower the byte limit"
        case EACCES, EPERM: return "; check the permissions of that path and of its folder (a store you may only read opens with isReadOnly, or with a cask read verb)"
        case EROFS: return "; that file system is read-only (a store on it opens with isReadOnly, or with a cask read verb)"
        case ENOTDIR: return "; a part of the path is a file, not a folder: check the path"
        case ENOENT: return "; the path does not exist: check it"
        case EIO: return "; the device reported an I/O error: check the disk, then run cask verify"
        default: return ""
        }
    }
}

extension CaskError: LocalizedError {
    /// The same text as ``description``: what went wrong, with the path, and what to do about it.
    /// (`localizedDescription` reads this, so `"\(error.localizedDescription)"` is useful too.)
    public var errorDescription: String? { description }
}
