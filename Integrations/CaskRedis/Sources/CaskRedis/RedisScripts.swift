/// The Lua scripts that apply a change atomically in Redis: the version check, the removal
/// times of prefixes and tags, the write, and the history entry (see format-spec.md, "Shared
/// tier on Redis"). Versions are fixed-width hex text, so Lua compares them as strings.
enum RedisScripts {
    /// Shared by the scripts: whether the entry `key` of version `ver` with `tags` (a JSON
    /// array) is covered by a removal by prefix (hash KEYS[2]) or tag (hash KEYS[3]).
    static let covered = """
    local function covered(key, ver, tags)
      local pre = redis.call('HGETALL', KEYS[2])
      for i = 1, #pre, 2 do
        if string.sub(key, 1, #pre[i]) == pre[i] and ver <= pre[i + 1] then return true end
      end
      for _, t in ipairs(cjson.decode(tags)) do
        local r = redis.call('HGET', KEYS[3], t)
        if r and ver <= r then return true end
      end
      return false
    end
    """

    /// KEYS: entry, prefixes, tags, history. ARGV: key, version, value, fresh-until ms,
    /// expiry ms, tags (JSON), history length, lifetime ms (until its expiry, at most the
    /// retention, so that pruning a removal's record never brings back what it covered).
    /// Answers 1 when applied.
    static let set = covered + """

    local kind = redis.call('TYPE', KEYS[1]).ok
    if kind ~= 'hash' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end
    local cur = redis.call('HGET', KEYS[1], 'ver')
    if cur and cur >= ARGV[2] then return 0 end
    if covered(ARGV[1], ARGV[2], ARGV[6]) then return 0 end
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], 'ver', ARGV[2], 'val', ARGV[3], 'fresh', ARGV[4], 'exp', ARGV[5], 'tags', ARGV[6])
    -- Until its expiry, and at most the retention: a removal's record is pruned only after
    -- every entry it covers is gone.
    redis.call('PEXPIRE', KEYS[1], ARGV[8])
    redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[7], '*', 'op', 'set', 'arg', ARGV[1], 'ver', ARGV[2])
    return 1
    """

    /// KEYS: entry, prefixes, tags, history. ARGV: key, version, history length, tombstone
    /// retention ms. Leaves a tombstone (`del`) that an older write cannot pass.
    static let remove = """
    local kind = redis.call('TYPE', KEYS[1]).ok
    if kind ~= 'hash' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end
    local cur = redis.call('HGET', KEYS[1], 'ver')
    if cur and cur >= ARGV[2] then return 0 end
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], 'ver', ARGV[2], 'del', '1')
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
    redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[3], '*', 'op', 'remove', 'arg', ARGV[1], 'ver', ARGV[2])
    return 1
    """

    /// KEYS: removal-times hash (prefixes or tags), history. ARGV: prefix or tag, version,
    /// history length, op name, the oldest version still kept (older removal times go).
    static let removeAll = """
    local cur = redis.call('HGET', KEYS[1], ARGV[1])
    if not cur or cur < ARGV[2] then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
    local all = redis.call('HGETALL', KEYS[1])
    for i = 1, #all, 2 do
      if all[i + 1] < ARGV[5] then redis.call('HDEL', KEYS[1], all[i]) end
    end
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'op', ARGV[4], 'arg', ARGV[1], 'ver', ARGV[2])
    return 1
    """

    /// KEYS: entry, prefixes, tags. ARGV: key. Answers [version, value, fresh, expiry, tags],
    /// or nil when absent, removed, covered by a removal, or not a hash (another client's key).
    static let read = covered + """

    if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return nil end
    local h = redis.call('HMGET', KEYS[1], 'ver', 'val', 'fresh', 'exp', 'tags', 'del')
    if not h[1] or h[6] or not h[2] or not h[5] then return nil end
    if covered(ARGV[1], h[1], h[5]) then return nil end
    return {h[1], h[2], h[3], h[4], h[5]}
    """

    /// KEYS: claim, token counter. ARGV: lease ms, the caller's clock in µs. Answers a new
    /// token when no claim with a lease is held, else 0. The token is the counter + 1, and at
    /// least the caller's clock, so tokens grow even after Redis lost the counter (a restart
    /// empty, a flush); a counter that is not a number from 1 to 2^53 is replaced. A claim key
    /// there without a time to live is not a claim Cask made: it is replaced.
    static let claimLoad = """
    if redis.call('PTTL', KEYS[1]) > 0 then return 0 end
    local t = nil
    if redis.call('TYPE', KEYS[2]).ok == 'string' then t = tonumber(redis.call('GET', KEYS[2])) end
    local now = tonumber(ARGV[2])
    if not t or t < 1 or t >= 9007199254740992 then t = now else t = math.max(t + 1, now) end
    local text = string.format('%.0f', t)
    redis.call('SET', KEYS[2], text)
    redis.call('SET', KEYS[1], text, 'PX', ARGV[1])
    return t
    """

    /// KEYS: claim. ARGV: token. Deletes the claim when it is still the token's.
    static let releaseLoad = """
    if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return 0 end
    if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
    return 0
    """
}
