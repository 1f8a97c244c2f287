// The tags of the forward cube's K/V cache (ForwardParams::kvCacheTiles; forward_cube.h): per
// L1 tile the key block it holds. A block's tile is the one holding it (a hit: no load), else
// the least recently used, which the caller loads. The cube keeps one cache for K and one for V.
#pragma once
#include "kernel_operator.h"
#include "forward_layout.h"

namespace AttentionCore {

struct KvTileCache {
    // `tiles` tiles (at most KV_CACHE_MAX_TILES), all empty.
    __aicore__ inline void Init(uint32_t tiles) { tiles_ = tiles; }

    // The tile of the key block of `cols` keys from token `token` of KV head `head` (batch *
    // numKvHeads + KV head); hit: it holds the block already.
    __aicore__ inline uint32_t Slot(uint32_t head, int64_t token, uint32_t cols, bool &hit)
    {
        uint32_t victim = 0;
        ++clock_;
        for (uint32_t i = 0; i < tiles_; ++i) {
            if (tags_[i].head == head && tags_[i].token == token && tags_[i].cols == cols) {
                tags_[i].used = clock_;
                hit = true;
                return i;
            }
            if (tags_[i].used < tags_[victim].used) {
                victim = i;
            }
        }
        tags_[victim].head = head;
        tags_[victim].token = token;
        tags_[victim].cols = cols;
        tags_[victim].used = clock_;
        hit = false;
        return victim;
    }

    // Whether some tile holds that block (no use recorded).
    __aicore__ inline bool Holds(uint32_t head, int64_t token, uint32_t cols) const
    {
        for (uint32_t i = 0; i < tiles_; ++i) {
            if (tags_[i].head == head && tags_[i].token == token && tags_[i].cols == cols) {
                return true;
            }
        }
        return false;
    }

    // Tiles 2 i and 2 i + 1 (the least recently used such pair) for the block from `token` and
    // the next one, loaded together: returns 2 i.
    __aicore__ inline uint32_t SlotPair(uint32_t head, int64_t token, uint32_t cols)
    {
        uint32_t victim = 0;
        uint64_t oldest = ~uint64_t(0);
        ++clock_;
        for (uint32_t i = 0; i + 1 < tiles_; i += 2) {
            const uint64_t used = tags_[i].used > tags_[i + 1].used ? tags_[i].used : tags_[i + 1].used;
            if (used < oldest) {
                oldest = used;
                victim = i;
            }
        }
        tags_[victim].head = head;
        tags_[victim].token = token;
        tags_[victim].cols = cols;
        tags_[victim].used = clock_;
        tags_[victim + 1].head = head;
        tags_[victim + 1].token = token + cols;
        tags_[victim + 1].cols = cols;
        tags_[victim + 1].used = clock_;
        return victim;
    }

private:
    struct Tag {
        uint32_t head = 0xFFFFFFFFu;  // all ones: empty
        uint32_t cols = 0;
        int64_t token = 0;
        uint64_t used = 0;
    };
    Tag tags_[KV_CACHE_MAX_TILES];
    uint32_t tiles_ = 0;
    uint64_t clock_ = 0;
};

}  // namespace AttentionCore
