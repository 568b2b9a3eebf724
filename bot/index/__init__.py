"""The repository index: parsing with tree-sitter, definitions and uses, and the lookups a
review asks for (docs/reviews.md "The repository index")."""
