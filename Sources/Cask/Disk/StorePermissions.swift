/// Who may read a store's files besides the user that writes them (``StoreOptions/permissions``).
///
/// New folders and files get exactly these modes, whatever the process's umask. Opening a store
/// whose folder or files other users could *write* is refused
/// (``CaskError/unsafePermissions(path:mode:)``); one that others may read beyond what is asked
/// (a store made by an older Cask, 0755 and 0644) is tightened by a writing open (its folder's
/// mode, which closes every file in it to others) and warned about by a read-only open. See the
/// Security article.
public enum StorePermissions: Sendable, Equatable {
    /// Folders `0700`, files `0600`: only the owner reads or writes. The default.
    case ownerOnly
    /// Folders `0750`, files `0640`: the folder's group may also read (a read-only reader or the
    /// `cask` tool run by an operations group). Nobody but the owner may write.
    case groupReadable

    /// The permission bits of a store folder.
    public var folderMode: UInt16 { self == .ownerOnly ? 0o700 : 0o750 }
    /// The permission bits of a store file.
    public var fileMode: UInt16 { self == .ownerOnly ? 0o600 : 0o640 }
}
