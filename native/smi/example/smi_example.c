#include "pa_smi.h"
int main(void){return 0;}
