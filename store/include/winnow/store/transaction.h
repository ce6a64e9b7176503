// Transaction: RAII write transaction. Commits only when commit() is called;
// otherwise (an exception, an early return) everything is rolled back.
#pragma once

namespace winnow::store {

class Database;

class Transaction {
 public:
  // BEGIN IMMEDIATE (takes the write lock now, waiting up to the busy
  // timeout). Inside an open transaction it opens a SAVEPOINT instead, so
  // store operations compose into one larger transaction.
  explicit Transaction(Database& db);
  ~Transaction();

  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // COMMIT (or RELEASE of the savepoint). Throws on failure; the destructor
  // then rolls back.
  void commit();

  bool nested() const { return nested_; }

 private:
  Database& db_;
  bool nested_ = false;
  bool done_ = false;
};

}  // namespace winnow::store
