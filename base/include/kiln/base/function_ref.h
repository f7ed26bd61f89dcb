// A non-owning reference to a callable: what a function that calls a
// callback, and does not keep it, takes. The callable must outlive the call.
#ifndef KILN_BASE_FUNCTION_REF_H_
#define KILN_BASE_FUNCTION_REF_H_

#include <memory>
#include <type_traits>
#include <utility>

namespace kiln::base {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  // Not for a FunctionRef itself (the copy constructor copies it), only for
  // a callable with this signature.
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
                                        std::is_invocable_r_v<R, F&, Args...>>>
  // cppcheck-suppress noExplicitConstructor
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): a lambda converts
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace kiln::base

#endif  // KILN_BASE_FUNCTION_REF_H_
