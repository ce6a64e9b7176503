// A judge/ file that reaches up into ingest/: the include check must refuse it.
#include "winnow/curation/judge/rule.h"
#include "winnow/curation/ingest/ingester.h"
