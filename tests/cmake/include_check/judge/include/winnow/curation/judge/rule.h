// A judge/ header that includes only what judge/ may use.
#pragma once
#include "winnow/curation/core/manifest_record.h"
