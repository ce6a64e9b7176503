#include "winnow/store/transaction.h"

#include <sqlite3.h>

#include "winnow/store/database.h"

namespace winnow::store {

Transaction::Transaction(Database& db, Nested nested)
    : db_(db), nested_(db.in_transaction()), joined_(nested_ && nested == Nested::join) {
  if (joined_) return;
  db_.exec(nested_ ? "SAVEPOINT winnow_nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (done_ || joined_) {
    return;
  }
  // A destructor cannot report; a failed rollback leaves the transaction
  // open, and the next BEGIN on this connection says so.
  if (nested_) {
    static_cast<void>(sqlite3_exec(db_.handle(), "ROLLBACK TO winnow_nested; RELEASE winnow_nested",
                                   nullptr, nullptr, nullptr));
  } else if (db_.in_transaction()) {  // SQLite may already have rolled back
    static_cast<void>(sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr));
  }
}

void Transaction::commit() {
  if (!joined_) db_.exec(nested_ ? "RELEASE winnow_nested" : "COMMIT");
  done_ = true;
}

}  // namespace winnow::store
