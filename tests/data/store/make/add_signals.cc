// Adds three signal-log entries ('S' keys, 'N') to a store with the store
// code of freshd c561337 (which has StoreBatch::AddSignal but no product
// writer for it), then prints the key count per type prefix.
#include <leveldb/db.h>

#include <cstdio>
#include <map>
#include <memory>

#include "store/page_store.h"
using namespace freshd;
int main(int argc, char** argv) {
  StoreConfig c;
  c.path = argv[1];
  {
    auto s = store::PageStore::Open(c);
    if (!s.ok()) {
      std::puts(s.status().ToString().c_str());
      return 1;
    }
    store::StoreBatch b;
    for (int i = 0; i < 3; ++i) {
      store::SignalEntry e{1000u + i, "http://h0.test/p" + std::to_string(i),
                           1764367000.0 + i, i ? "sitemap" : "api"};
      if (!b.AddSignal(e).ok()) return 1;
    }
    if (!(*s)->Commit(b, 1764367100.0).ok()) return 1;
    if (!(*s)->Close().ok()) return 1;
  }
  leveldb::DB* db;
  leveldb::Options o;
  if (!leveldb::DB::Open(o, argv[1], &db).ok()) return 1;
  std::map<char, int> n;
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator({}));
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n[it->key()[0]];
  for (auto [k, v] : n) std::printf("%c %d\n", k, v);
  delete it.release();
  delete db;
}
