#include <criterion/criterion.h>
Test(gen, placeholder) { cr_assert(1); }
