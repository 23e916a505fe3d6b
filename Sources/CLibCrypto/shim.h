#ifndef CASK_CLIBCRYPTO_SHIM_H
#define CASK_CLIBCRYPTO_SHIM_H
// What Cask's encryption at rest needs from the system libcrypto (OpenSSL 3; Debian:
// libssl-dev), on Linux: AES-256-GCM with a context that keeps its key schedule between records
// (each record only sets its nonce; format-spec.md, "Sealed records"), GMAC, HMAC-SHA256 and
// SHA-256. Apple platforms use swift-crypto (CryptoKit) instead; Linux builds no other crypto library.
#include <openssl/evp.h>
#include <openssl/hmac.h>

/// Initialises libcrypto now (it registers its own exit handler then); 1 on success.
static inline int cask_crypto_init(void) {
    return OPENSSL_init_crypto(0, NULL);
}

/// HMAC-SHA256 of `count` bytes of `data` under `key` (`keyCount` bytes), written to `mac`
/// (32 bytes); 1 on success.
static inline int cask_hmac_sha256(const unsigned char *key, int keyCount, const unsigned char *data, size_t count,
                                   unsigned char *mac) {
    unsigned int n = 0;
    return HMAC(EVP_sha256(), key, keyCount, data, count, mac, &n) != NULL && n == 32;
}

/// SHA-256 of `count` bytes of `data`, written to `digest` (32 bytes); 1 on success.
static inline int cask_sha256(const unsigned char *data, size_t count, unsigned char *digest) {
    unsigned int n = 0;
    return EVP_Digest(data, count, digest, &n, EVP_sha256(), NULL) == 1 && n == 32;
}

/// A context for `key` (32 bytes), for sealing (`encrypt` 1) or opening (0); NULL on failure.
static inline EVP_CIPHER_CTX *cask_gcm_new(const unsigned char *key, int encrypt) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return NULL;
    if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, NULL, encrypt) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static inline void cask_gcm_free(EVP_CIPHER_CTX *ctx) { EVP_CIPHER_CTX_free(ctx); }

/// Seals `count` bytes of `in` into `out` (the same count) and writes the 16-byte tag to `tag`,
/// authenticating `aad`; 1 on success.
static inline int cask_gcm_seal(EVP_CIPHER_CTX *ctx, const unsigned char *nonce, const unsigned char *aad, int aadCount,
                                const unsigned char *in, int count, unsigned char *out, unsigned char *tag) {
    int n = 0;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1) return 0;
    if (EVP_EncryptUpdate(ctx, NULL, &n, aad, aadCount) != 1) return 0;
    if (count > 0 && EVP_EncryptUpdate(ctx, out, &n, in, count) != 1) return 0;
    if (EVP_EncryptFinal_ex(ctx, out + count, &n) != 1) return 0;
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
}

/// Opens `count` bytes of `in` into `out` if `tag` authenticates them and `aad`: 1 when it does,
/// 0 when it does not, -1 when libcrypto failed before it could tell.
static inline int cask_gcm_open(EVP_CIPHER_CTX *ctx, const unsigned char *nonce, const unsigned char *aad, int aadCount,
                                const unsigned char *in, int count, const unsigned char *tag, unsigned char *out) {
    int n = 0;
    if (EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1) return -1;
    if (EVP_DecryptUpdate(ctx, NULL, &n, aad, aadCount) != 1) return -1;
    if (count > 0 && EVP_DecryptUpdate(ctx, out, &n, in, count) != 1) return -1;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, (void *)tag) != 1) return -1;
    return EVP_DecryptFinal_ex(ctx, out + count, &n) > 0 ? 1 : 0;
}
/// Starts a GMAC (AES-GCM authenticating `aad` only, no ciphertext) under `nonce` (12 bytes):
/// the file seal of hint files and the index snapshot (format-spec.md, "File seals"). 1 on success.
static inline int cask_gmac_begin(EVP_CIPHER_CTX *ctx, const unsigned char *nonce) {
    return EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) == 1;
}

/// Adds `count` bytes to a GMAC begun with `cask_gmac_begin`, in pieces of at most 1 GiB.
static inline int cask_gmac_update(EVP_CIPHER_CTX *ctx, const unsigned char *data, size_t count) {
    int n = 0;
    while (count > 0) {
        int piece = count > (1u << 30) ? (1 << 30) : (int)count;
        if (EVP_EncryptUpdate(ctx, NULL, &n, data, piece) != 1) return 0;
        data += piece;
        count -= (size_t)piece;
    }
    return 1;
}

/// Ends a GMAC and writes its 16-byte tag; 1 on success.
static inline int cask_gmac_finish(EVP_CIPHER_CTX *ctx, unsigned char *tag) {
    unsigned char none[16];
    int n = 0;
    if (EVP_EncryptFinal_ex(ctx, none, &n) != 1) return 0;
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
}
#endif
