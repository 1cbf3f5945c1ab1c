"""Small adapters for libraries that don't yet know the `tpu` device."""
