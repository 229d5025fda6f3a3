#include <stdio.h>
#include <cpuid.h>
static void leaf(unsigned l, unsigned s){unsigned a,b,c,d;__cpuid_count(l,s,a,b,c,d);printf("leaf 0x%08x sub %u: eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n",l,s,a,b,c,d);}
int main(){unsigned a,b,c,d;__cpuid(0,a,b,c,d);unsigned max=a;
for(unsigned l=0;l<=max;l++){unsigned subs=1; if(l==4||l==7||l==0xb||l==0xd||l==0x1f)subs=6; if(l==0xd)subs=20; for(unsigned s=0;s<subs;s++)leaf(l,s);}
__cpuid(0x80000000,a,b,c,d);unsigned emax=a;for(unsigned l=0x80000000;l<=emax;l++){unsigned subs=(l==0x8000001d)?6:1;for(unsigned s=0;s<subs;s++)leaf(l,s);}
return 0;}
