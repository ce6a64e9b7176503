// Transaction: RAII write transaction. Commits only when commit() is called;
// otherwise (an exception, an early return) everything is rolled back.
#pragma once

namespace winnow::store {

class Database;

class Transaction {
 public:
  // What a Transaction opened inside an open transaction does.
  enum class Nested {
    // A SAVEPOINT: its failure rolls back its own writes and leaves the
    // caller's transaction usable.
    savepoint,
    // Nothing: its writes join the caller's transaction, and its failure
    // leaves them there for the caller to roll back (the exception goes on).
    // For writes of many rows in one statement loop: SQLite truncates an
    // in-memory statement journal by walking it from its start, so inside a
    // savepoint that has journalled many pages every statement costs time in
    // proportion to them (a real share of a batch that re-judges many
    // labels, issue 16).
    join,
  };

  // BEGIN IMMEDIATE (takes the write lock now, waiting up to the busy
  // timeout). Inside an open transaction: see Nested.
  explicit Transaction(Database& db, Nested nested = Nested::savepoint);
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
  bool joined_ = false;  // nested with Nested::join: no statement of its own
  bool done_ = false;
};

}  // namespace winnow::store
