from django.urls import path

from apps.costs import views

app_name = "costs"

urlpatterns = [
    path("", views.procurement, name="procurement"),
    path("export.csv", views.export_csv, name="export-csv"),
    path("export.json", views.export_json, name="export-json"),
    path("claim/", views.claim, name="claim"),
    path("claim/verdict.svg", views.claim_image, name="claim-image"),
    path("profiles/", views.profile_save, name="profile-save"),
    path("profiles/active/", views.profile_activate, name="profile-activate"),
    path("saved/", views.page_save, name="page-save"),
    path("s/<str:slug>/", views.saved, name="saved"),
]
