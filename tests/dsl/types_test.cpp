// Placeholder removed when dsl/types.cpp lands.
#include <gtest/gtest.h>
