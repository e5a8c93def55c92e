"""AdmissionReview in, AdmissionReview out: parsing, dispatch and response building."""
