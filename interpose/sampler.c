/*
 * sampler.c: samplers, passed through to the real context.
 */
#include "api.h"
#include "check.h"

static void sampler_destroy(struct vast_object *obj)
{
    cl_sampler s = (cl_sampler)obj;
    s->context->backend->dispatch->clReleaseSampler(s->real);
    VAST_RELEASE(s->context);
}

static cl_sampler sampler_wrap(cl_context context, cl_sampler real, cl_int err, cl_int *errcode_ret)
{
    VAST_RETURN_NULL_IF(real == NULL, err, errcode_ret, "the real platform refused the sampler");
    cl_sampler s = vast_object_alloc(sizeof *s);
    if (s == NULL) {
        context->backend->dispatch->clReleaseSampler(real);
        vast_set_error(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        return NULL;
    }
    vast_object_init(&s->obj, VAST_MAGIC_SAMPLER, sampler_destroy);
    s->real = real;
    s->context = context;
    VAST_RETAIN(context);
    vast_set_error(errcode_ret, CL_SUCCESS);
    return s;
}

cl_sampler vast_clCreateSampler(cl_context context, cl_bool normalized_coords, cl_addressing_mode addressing_mode,
                                cl_filter_mode filter_mode, cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateSampler, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_sampler real = fn_(context->real, normalized_coords, addressing_mode, filter_mode, &err);
    return sampler_wrap(context, real, err, errcode_ret);
}

cl_sampler vast_clCreateSamplerWithProperties(cl_context context, const cl_sampler_properties *sampler_properties,
                                              cl_int *errcode_ret)
{
    VAST_CHECK_NULL(context, VAST_MAGIC_CONTEXT, CL_INVALID_CONTEXT, errcode_ret);
    VAST_REAL_OR_NULL(context->backend, context->real, clCreateSamplerWithProperties, errcode_ret);
    cl_int err = CL_SUCCESS;
    cl_sampler real = fn_(context->real, sampler_properties, &err);
    return sampler_wrap(context, real, err, errcode_ret);
}

VAST_RETAIN_RELEASE(vast_clRetainSampler, vast_clReleaseSampler, cl_sampler,
                    sampler, VAST_MAGIC_SAMPLER, CL_INVALID_SAMPLER)

cl_int vast_clGetSamplerInfo(cl_sampler sampler, cl_sampler_info param_name, size_t param_value_size,
                             void *param_value, size_t *param_value_size_ret)
{
    VAST_CHECK(sampler, VAST_MAGIC_SAMPLER, CL_INVALID_SAMPLER);
    if (param_name == CL_SAMPLER_CONTEXT)
        return vast_info_answer(&sampler->context, sizeof(cl_context), param_value_size, param_value,
                                param_value_size_ret);
    if (param_name == CL_SAMPLER_REFERENCE_COUNT)
        return vast_info_refcount(&sampler->obj, param_value_size, param_value, param_value_size_ret);
    VAST_PASS(sampler->context->backend, sampler->real, clGetSamplerInfo, sampler->real, param_name,
              param_value_size, param_value, param_value_size_ret);
}
