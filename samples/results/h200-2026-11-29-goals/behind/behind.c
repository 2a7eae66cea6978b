/* NBody's host pattern: 2 non-blocking writes, a long kernel, a non-blocking read, a blocking read. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define C(x) do{cl_int e_=(x); if(e_){fprintf(stderr,"%s:%d %d\n",__FILE__,__LINE__,e_);exit(1);}}while(0)
static const char *src="__kernel void k(__global const float*a,__global const float*b,__global float*c,__global float*d,int it){size_t i=get_global_id(0); float x=a[i],y=b[i]; for(int j=0;j<it;j++){x=x*0.99991f+y; y=y*0.99993f+x*1e-6f;} c[i]=x; d[i]=y;}";
int main(int argc,char**argv){
  const char*plat=argv[1]; int it=atoi(argv[2]); int mode=atoi(argv[3]); size_t n=524288, bytes=n*4;
  cl_platform_id ps[8]; cl_uint np; C(clGetPlatformIDs(8,ps,&np)); cl_platform_id p=0;
  for(cl_uint i=0;i<np;i++){char b[256];clGetPlatformInfo(ps[i],CL_PLATFORM_NAME,256,b,0); if(strstr(b,plat)) p=ps[i];}
  cl_device_id d; C(clGetDeviceIDs(p,CL_DEVICE_TYPE_ALL,1,&d,0)); cl_int e;
  cl_context c=clCreateContext(0,1,&d,0,0,&e);C(e); cl_command_queue q=clCreateCommandQueueWithProperties(c,d,0,&e);C(e);
  cl_program pr=clCreateProgramWithSource(c,1,&src,0,&e);C(e); C(clBuildProgram(pr,1,&d,"",0,0)); cl_kernel k=clCreateKernel(pr,"k",&e);C(e);
  float *h[4]; for(int i=0;i<4;i++){h[i]=malloc(bytes); for(size_t j=0;j<n;j++) h[i][j]=(float)(j%97)*0.01f;}
  for(int r=0;r<4;r++){
    cl_mem m[4]; for(int i=0;i<4;i++){m[i]=clCreateBuffer(c,CL_MEM_READ_WRITE,bytes,0,&e);C(e);}
    C(clFinish(q));
    double t0=now();
    C(clEnqueueWriteBuffer(q,m[0],CL_FALSE,0,bytes,h[0],0,0,0)); C(clEnqueueWriteBuffer(q,m[1],CL_FALSE,0,bytes,h[1],0,0,0));
    double t1=now();
    for(int i=0;i<4;i++) C(clSetKernelArg(k,i,sizeof(cl_mem),&m[i])); C(clSetKernelArg(k,4,4,&it));
    size_t g=n,l=256; C(clEnqueueNDRangeKernel(q,k,1,0,&g,&l,0,0,0));
    double t2=now(), t3;
    if(mode==1){C(clFinish(q));}
    t3=now();
    if(mode!=2) C(clEnqueueReadBuffer(q,m[2],CL_FALSE,0,bytes,h[2],0,0,0));
    if(mode==3) C(clFinish(q));
    double t4=now();
    C(clEnqueueReadBuffer(q,m[3],CL_TRUE,0,bytes,h[3],0,0,0));
    double t5=now();
    printf("r%d mode%d writes %.4f launch %.4f finish %.4f read1 %.4f read2 %.4f total %.4f\n",r,mode,t1-t0,t2-t1,t3-t2,t4-t3,t5-t4,t5-t0);
    for(int i=0;i<4;i++) clReleaseMemObject(m[i]);
  }
  return 0;
}
